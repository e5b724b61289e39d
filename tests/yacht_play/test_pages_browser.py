"""Every page in Debian's chromium: axe-core finds no serious or critical violation (WCAG 2 A/AA and best
practices) on the lobby, the game page while rolling, against agents and at the game over, a player's games,
the report and the 404 page; the player's page and the report fit a 375 px and a 320 px screen; every page
has its icon; the report picks a rule set; a player's page keeps rule sets apart.

Skipped, with the reason, where playwright, axe-playwright-python or /usr/bin/chromium is missing. Screenshots go
to the test's temporary folder.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve tests need httpx")

from tests.yacht_play import test_serve_browser as browser_tests  # noqa: E402
from tests.yacht_play.accessibility import assert_accessible, axe_script, by_impact  # noqa: E402
from tests.yacht_play.pages_support import played_database  # noqa: E402
from tests.yacht_play.serve_support import Server  # noqa: E402
from tests.yacht_play.test_serve_browser import DESKTOP, PHONE, play_turn_by_clicking, settle, start_game  # noqa: E402

browser = browser_tests.browser  # the browser tests' fixture
NARROW = [PHONE, {"width": 320, "height": 568}]
# moderate and minor rules these pages once broke, and keep now: a level-one heading, one main landmark, all content
# in landmarks, no empty table header
KEPT = ("page-has-heading-one", "landmark-one-main", "region", "empty-table-header")
WRITTEN_PAGES = ["/player/Ann", "/player/Bea", "/report", "/report?rules=yahtzee", "/no/such/page"]

# the page's widest overflow: the document past the window, or a box that scrolls sideways past its own width
OVERFLOW = """() => {
    const scrolls = (node) => ['auto', 'scroll'].includes(getComputedStyle(node).overflowX);
    const boxes = [...document.querySelectorAll('*')].filter(scrolls);
    const inner = boxes.map((node) => node.scrollWidth - node.clientWidth);
    return Math.max(document.scrollingElement.scrollWidth - window.innerWidth, ...inner, 0);
}"""
TALLEST_CELL = "() => Math.max(0, ...[...document.querySelectorAll('td')].map((cell) => cell.getBoundingClientRect().height))"


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    """A server on a database of finished games under two rule sets (Yacht and Yahtzee)."""
    axe_script()  # skip the module before the games are played, where axe-core is missing
    server = Server(played_database(tmp_path_factory.mktemp("pages") / "yacht.db")).start()
    yield server
    server.stop()


def expected(url: str) -> bool:
    """Whether a 404 is the answer the test asked for (the missing page's)."""
    return "/no/such/" in url


@pytest.fixture
def open_page(browser, server):
    """A function opening a page at a viewport size; fails the test on any error the page or its console reports
    (a missing icon's 404 among them; the 404 page's own status aside), and on any request to another host than
    the server's (axe-core among them: it comes from the installed wheel)."""
    contexts, errors = [], []

    def opened(viewport=DESKTOP):
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: message.type == "error" and not expected(page.url) and errors.append(message.text))
        page.on("response", lambda answer: answer.status >= 400 and not expected(answer.url) and errors.append(answer.url))
        page.on("request", lambda request: request.url.startswith(server.url) or errors.append(f"fetched {request.url}"))
        return page

    yield opened
    for context in contexts:
        context.close()
    assert not errors, f"the pages reported: {errors}"


def checked(page, where: str, tmp_path, found: dict) -> None:
    """Wait for the page to finish loading, save a screenshot, and run axe on it (serious or critical: a failure)."""
    page.wait_for_load_state("networkidle")
    page.screenshot(path=tmp_path / f"{re.sub(r'[^a-z0-9]+', '-', where.lower()).strip('-')}.png", full_page=True)
    found[where] = by_impact(assert_accessible(page, where, also=KEPT))


def test_axe_finds_no_serious_violation_on_any_page(open_page, server, tmp_path, capsys):
    found: dict = {}
    page = open_page()
    page.goto(server.url + "/")
    checked(page, "lobby", tmp_path, found)
    start_game(page, server, "Axe")
    page.click("#dice .die >> nth=0")  # a held die, then a roll: the table while rolling
    page.click("#roll")
    settle(page)
    checked(page, "game, rolling", tmp_path, found)
    start_game(page, server, "Axe", "table", ["greedy", "random"], coach=True)
    play_turn_by_clicking(page)  # the coach's card, the agents' columns and the table talk
    checked(page, "game against agents, with the coach", tmp_path, found)
    while play_turn_by_clicking(page) != "over":
        pass
    page.wait_for_selector("#over .chart svg")
    checked(page, "game over", tmp_path, found)
    for path in WRITTEN_PAGES:
        page.goto(server.url + path)
        checked(page, path, tmp_path, found)
    phone = open_page(PHONE)
    start_game(phone, server, "Axe")
    phone.click("#dice .die >> nth=1")
    phone.click("#roll")
    settle(phone)
    checked(phone, "game, rolling, at 375 px", tmp_path, found)
    for path in ["/", *WRITTEN_PAGES]:
        phone.goto(server.url + path)
        checked(phone, f"{path if path != '/' else 'lobby'} at 375 px", tmp_path, found)
    with capsys.disabled():
        print("\naxe (minor and moderate left):", {where: counts for where, counts in found.items() if counts})


@pytest.mark.parametrize("viewport", NARROW, ids=lambda size: f"{size['width']}px")
def test_the_player_page_and_the_report_fit_a_phone(open_page, server, tmp_path, viewport):
    page = open_page(viewport)
    for path in WRITTEN_PAGES[:4]:
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
        page.wait_for_selector("table")
        page.screenshot(path=tmp_path / f"{path.strip('/').replace('/', '-').replace('?', '-')}.png", full_page=True)
        assert page.evaluate(OVERFLOW) <= 0, path  # no scrolling sideways, the page nor any table in it
        assert page.evaluate(TALLEST_CELL) <= 50, path  # two lines at most (a figure, its interval): no note wraps


def test_the_report_is_in_the_sites_look_with_its_charts_and_a_rules_picker(open_page, server, tmp_path):
    page = open_page()
    page.goto(server.url + "/")
    page.click("header.bar >> text=Report")  # the lobby links to the report
    page.wait_for_url("**/report")
    assert page.locator("header.bar .brand").inner_text().endswith("Yacht")
    assert page.evaluate("() => getComputedStyle(document.body).fontFamily").startswith("system-ui")
    assert page.locator("main h1").inner_text() == "Agents and people"
    assert re.search(r"\b\d+ finished games under the yacht rules", page.inner_text("main"))  # 3, and those played here
    assert page.locator("main svg.plot").count() == 7  # and the temperatures, the likeness, the ratings
    assert page.locator("svg.plot rect").count() >= 6  # bars: 2 agents, 2 bins, 2 game numbers, people and agents
    page.screenshot(path=tmp_path / "report-yacht.png", full_page=True)
    page.click(".rules-picker >> text=Yahtzee (1 game)")
    page.wait_for_url("**/report?rules=yahtzee")
    assert "1 finished game under the yahtzee rules" in page.inner_text("main")
    assert page.get_attribute(".rules-picker [aria-current=page]", "href") == "?rules=yahtzee"
    page.screenshot(path=tmp_path / "report-yahtzee.png", full_page=True)


def test_a_missing_page_is_a_page_in_the_sites_look(open_page, server, tmp_path):
    page = open_page()
    answer = page.goto(server.url + "/no/such/page")
    assert answer.status == 404 and answer.headers["content-type"].startswith("text/html")
    assert page.locator("main h1").inner_text() == "No such page"
    assert "no page '/no/such/page'" in page.inner_text("main")
    page.screenshot(path=tmp_path / "404.png")
    page.click("main >> text=Start a game")
    page.wait_for_selector("#new-game")


def test_the_player_page_keeps_rule_sets_apart_and_a_solitaire_game_has_no_winner(open_page, server):
    page = open_page()
    page.goto(server.url + "/player/Ann")
    page.wait_for_selector("table.history tbody tr")
    stats = page.inner_text("#stats")
    assert stats.startswith("3 games, 3 finished") and "Yacht: mean score" in stats and "Yahtzee: mean score" in stats
    solitaire = page.locator("table.history tbody tr", has_text="solitaire")
    assert solitaire.count() == 2 and page.locator("table.history tbody tr td.win", has_text="–").count() == 0
    assert all(text.strip() for text in page.locator("table.history th").all_inner_texts())  # no empty header
