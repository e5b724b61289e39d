"""The pages the server writes itself, in the site's look: the frame around a page's content, and error pages."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")

from yacht_play.serve.pages import BAR, HEAD, error_page, site_page  # noqa: E402


def test_a_page_is_the_site_s_head_and_bar_around_its_main_with_its_title_escaped():
    page = site_page("Games of <ann> & bob", "<p>content</p>")
    assert page == (
        HEAD.format(title="Games of &lt;ann&gt; &amp; bob") + f"<body>\n{BAR}<main>\n<p>content</p>\n</main>\n</body>\n</html>\n"
    )
    assert "<main class='report'>\n" in site_page("Report", "", main_class="report")


TITLES = {
    400: "Not a request this page takes",
    404: "No such page",
    405: "Not a request this page takes",
    500: "Something went wrong on the server",
    403: "The request was refused",  # any other status
}


@pytest.mark.parametrize(("status", "title"), TITLES.items())
def test_an_error_page_has_its_status_its_title_its_reason_escaped_and_is_never_cached(status, title):
    response = error_page(status, "no game 'x<script>'")
    body = response.body.decode()
    assert response.status_code == status and response.headers["cache-control"] == "no-store"
    assert response.headers["content-type"].startswith("text/html")
    assert f"<title>Yacht: {title.lower()}</title>" in body
    assert f"<h1>{title}</h1><p>no game &#x27;x&lt;script&gt;&#x27;</p>" in body
    assert body.startswith("<!doctype html>") and "<script>" not in body
