"""The pages the server writes itself (the report, the error pages), in the site's look: the static pages' head,
style sheet, icon and header bar around a ``<main>``.

Every text that comes from a request or the database is escaped (``html.escape``): by the caller in ``main``, here in
the rest.
"""

from __future__ import annotations

import html

from yacht_env.extras import needs_extra

with needs_extra("serve"):
    from starlette.responses import HTMLResponse

HEAD = (
    "<!doctype html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
    "<meta name='viewport' content='width=device-width, initial-scale=1'>\n<title>{title}</title>\n"
    "<link rel='icon' href='/static/favicon.svg' type='image/svg+xml'>\n"
    "<link rel='stylesheet' href='/static/yacht.css'>\n</head>\n"
)
BAR = (
    "<header class='bar'><a class='brand' href='/'>&#9856; Yacht</a>"
    "<nav class='who' aria-label='Pages'><a href='/'>New game</a><a href='/report'>Report</a></nav></header>\n"
)


def site_page(title: str, main: str, main_class: str = "") -> str:
    """A whole page: ``title`` (plain text, escaped here) and ``main``, the page's content (HTML, already escaped)."""
    attributes = f" class='{main_class}'" if main_class else ""
    return f"{HEAD.format(title=html.escape(title))}<body>\n{BAR}<main{attributes}>\n{main}\n</main>\n</body>\n</html>\n"


ERROR_TITLES = {
    400: "Not a request this page takes",
    404: "No such page",
    405: "Not a request this page takes",
    500: "Something went wrong on the server",
}


def error_page(status: int, message: str) -> HTMLResponse:
    """The HTML answer to a refused page request: its status, and its one-line reason in a card."""
    title = ERROR_TITLES.get(status, "The request was refused")
    main = (
        f"<section class='card error-page'><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(message)}</p>"
        "<p><a class='button primary' href='/'>Start a game</a> <a class='button' href='/report'>See the report</a></p>"
        "</section>"
    )
    return HTMLResponse(site_page(f"Yacht: {title.lower()}", main), status_code=status, headers={"Cache-Control": "no-store"})
