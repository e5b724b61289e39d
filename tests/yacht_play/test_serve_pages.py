"""The pages the server writes: the report as a page in the site's look (under the server's rules by default, with
a picker for the others, its charts as inline SVG), error pages for page requests (JSON for the API), the icon,
and counts that say "1 person, 1 game"."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve tests need httpx (Starlette's TestClient)")

from tests.yacht_play.pages_support import play_games  # noqa: E402
from tests.yacht_play.test_serve_api import TestClient  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.report.build import build_report  # noqa: E402
from yacht_play.report.filters import Filters  # noqa: E402
from yacht_play.report.svg_charts import nice_ticks  # noqa: E402
from yacht_play.report.text import text_lines  # noqa: E402
from yacht_play.serve.app import STATIC, create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    return GameService(db.connect(str(tmp_path_factory.mktemp("pages") / "yacht.db")), ["greedy", "random"])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        play_games(client)
        yield client


def in_the_site_look(page) -> bool:
    text = page.text
    return all(
        part in text
        for part in ("/static/yacht.css", "<header class='bar'>", "<main", "<h1>", "/static/favicon.svg", "lang='en'", "<title>")
    )


def test_the_report_page_of_two_rule_sets_is_the_servers_rules_with_a_picker(client):
    assert client.get("/api/report").status_code == 400  # the API still asks which
    page = client.get("/report")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert in_the_site_look(page) and '"error"' not in page.text
    assert "3 finished games under the yacht rules" in page.text
    picker = re.search(r"<nav class='rules-picker'.*?</nav>", page.text).group(0)
    assert "aria-current='page' href='?rules=yacht'>Yacht (3 games)</a>" in picker
    assert "<a class='pill' href='?rules=yahtzee'>Yahtzee (1 game)</a>" in picker  # not the one shown
    assert picker.count("aria-current") == picker.count(" chosen") == 1
    assert "Yatzy" not in picker  # a rule set without games is not offered
    # win rates, the histogram, by games played, agents graded; the temperatures, the likeness, the ratings
    assert page.text.count("<svg class='plot'") == 7
    yahtzee = client.get("/report?rules=yahtzee&mode=solitaire")
    assert "1 finished game under the yahtzee rules" in yahtzee.text
    assert "href='?mode=solitaire&amp;rules=yacht'" in yahtzee.text  # the picker keeps the other filters


@pytest.mark.parametrize(
    ("games", "shown"),
    [
        ([("Ann", "yahtzee", "solitaire", []), ("Bea", "yahtzee", "solitaire", []), ("Ann", "yacht", "solitaire", [])], "yacht"),
        ([("Ann", "yatzy", "solitaire", []), ("Bea", "yahtzee", "solitaire", []), ("Cy", "yahtzee", "solitaire", [])], "yahtzee"),
    ],
    ids=["the-servers-rules-though-fewer", "none-under-the-servers-rules"],
)
def test_the_report_page_shows_the_servers_rules_when_any_game_is_under_them_else_the_most_played(tmp_path, games, shown):
    service = GameService(db.connect(str(tmp_path / "yacht.db")), ["greedy"])  # the server plays Yacht's rules
    with TestClient(create_app(service)) as client:
        play_games(client, games)
        page = client.get("/report").text
    count = sum(rules == shown for _, rules, _, _ in games)
    assert f"{count} finished game{'s' if count > 1 else ''} under the {shown} rules" in page
    picker = re.search(r"<nav class='rules-picker'.*?</nav>", page).group(0)
    assert f"aria-current='page' href='?rules={shown}'>" in picker and picker.count("aria-current") == 1


def test_the_report_counts_in_the_singular_and_plural(service, client):
    report = build_report(db.all_games(service.engine, finished_only=True), Filters(rules="yacht"), service.grader)
    lines = "\n".join(text_lines(report))
    assert "random: 1 game, 1 person;" in lines and "greedy: 1 game, 1 person;" in lines
    assert "(2 people, 3 games)" in lines and "Bea: 1 game;" in lines and "Ann: 2 games;" in lines
    page = client.get("/report").text
    assert "1 game, 1 person" in page and "1 games" not in page and "1 people" not in page


def test_a_figure_without_an_interval_says_so_in_a_few_words(client):
    page = client.get("/report").text
    assert "n=1, no interval" in page  # in the cell; the full reason in its tooltip
    assert "title='" in page and "too few games for an interval" in page
    assert not re.search(r">[^<]*too few", page)  # the long form, which wrapped into tall cells, is not shown


def test_page_requests_get_pages_and_api_requests_get_json(client):
    missing = client.get("/no/such/page")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    assert in_the_site_look(missing) and "No such page" in missing.text and "no page &#x27;/no/such/page&#x27;" in missing.text
    api = client.get("/api/no/such")
    assert api.status_code == 404 and api.json() == {"error": "no page '/api/no/such'"}
    bad = client.get("/report", params={"since": "<script>"})
    assert bad.status_code == 400 and in_the_site_look(bad) and "&lt;script&gt;" in bad.text and "<script>" not in bad.text
    assert "is not a date" in bad.text
    assert client.get("/api/report", params={"since": "x"}).json()["error"].startswith("since 'x' is not a date")
    wrong_method = client.post("/report")
    assert wrong_method.status_code == 405 and in_the_site_look(wrong_method)
    assert "POST is not taken here" in wrong_method.text and "no page" not in wrong_method.text
    api_method = client.put("/api/report")
    assert api_method.status_code == 405 and api_method.json() == {"error": "PUT is not taken here"}


def test_a_missing_page_s_path_is_repeated_to_80_characters_then_cut_with_its_length(client):
    whole = "/api/" + "x" * 75
    assert client.get(whole).json() == {"error": f"no page '{whole}'"}
    assert client.get(whole + "y").json() == {"error": f"no page '{whole}'... (81 characters)"}


def test_a_server_error_is_the_sites_error_page_for_a_page_and_json_for_the_api(service, monkeypatch):
    """A bug in a route (an exception no handler takes) was answered in Starlette's plain text, without the
    security headers: a page request now gets the site's error page, an API request a JSON error."""
    from yacht_play.serve import app as app_module

    def broken(*args, **kwargs):
        raise RuntimeError("a bug, with a /secret/path in its message")

    monkeypatch.setattr(app_module, "report_page_html", broken)
    monkeypatch.setattr(app_module, "population_report", broken)
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        page, api = client.get("/report"), client.get("/api/report")
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/html") and in_the_site_look(page)
    assert "Something went wrong on the server" in page.text
    assert api.status_code == 500 and api.json() == {"error": app_module.SERVER_ERROR}
    for answer in (page, api):
        assert "content-security-policy" in answer.headers and "/secret/path" not in answer.text  # the log's, not the page's


def test_every_server_error_passes_the_security_headers_even_when_the_error_page_fails(service, monkeypatch):
    """The security headers were added to a 500 by its handler, by hand: an error page that failed in turn
    went out bare (no headers, no body), and no 500 carried Server-Timing. Now one middleware wraps everything."""
    from yacht_play.serve import app as app_module
    from yacht_play.serve import pages

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(app_module, "report_page_html", broken)
    monkeypatch.setattr(app_module, "population_report", broken)
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        handled = [client.get("/report"), client.get("/api/report")]
        monkeypatch.setattr(pages, "error_page", broken)  # the error page itself fails
        bare = client.get("/report")
    assert bare.status_code == 500 and bare.text == app_module.SERVER_ERROR + "\n"
    for answer in (*handled, bare):
        assert answer.status_code == 500
        for name, value in app_module.SECURITY_HEADERS:
            assert answer.headers.get(name.decode()) == value.decode()
    assert all(answer.headers["server-timing"].startswith("app;dur=") for answer in handled)


def test_every_page_names_the_icon_and_the_icon_is_served(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content == client.get("/static/favicon.svg").content and b"<svg" in icon.content
    for name in ("lobby.html", "game.html", "player.html"):
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in (STATIC / name).read_text(), name
    assert "/static/favicon.svg" in client.get("/report").text and "/static/favicon.svg" in client.get("/nowhere").text


def test_the_lobby_and_the_player_page_link_to_the_report():
    assert 'href="/report"' in (STATIC / "lobby.html").read_text()
    assert 'href="/report"' in (STATIC / "player.html").read_text()


@pytest.mark.parametrize(
    "top, ticks",
    [(2.9, [0, 1, 2, 3]), (3.9, [0, 1, 2, 3, 4]), (7.8, [0, 2, 4, 6, 8]), (12.7, [0, 5, 10, 15]), (0.43, [0, 0.2, 0.4, 0.6])],
)
def test_chart_axes_are_at_round_numbers(top, ticks):
    assert nice_ticks(top) == pytest.approx(ticks)
