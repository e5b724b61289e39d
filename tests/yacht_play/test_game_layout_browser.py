"""The game page at phone, narrow and short sizes, in Debian's chromium driven by Playwright: what is in view, what
the page says during the agents' turns, what a reload keeps, the game-over tables and chart, and keyboard focus.

Skipped, with the reason in the summary, where playwright or /usr/bin/chromium is missing. One server serves the
module; screenshots go to each test's temporary folder.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
httpx = pytest.importorskip("httpx", reason="the serve tests need httpx")

from tests.yacht_play import test_serve_browser as browser_tests  # noqa: E402
from tests.yacht_play.serve_support import Server  # noqa: E402

browser = browser_tests.browser  # the fixture: one Chromium per module

PHONES = [(375, 740), (320, 568), (740, 360)]
DESKTOP = (1280, 900)
SHORT = (1280, 400)
IN_VIEW = """el => {
    const r = el.getBoundingClientRect();
    const inside = r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return inside && el.contains(hit);
}"""  # wholly inside the window and not covered by anything else at its centre


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("layout") / "yacht.db", options=("--new-games-per-minute", "0")).start()
    yield server
    server.stop()


@pytest.fixture
def open_page(browser):
    """``open_page(width, height, touch=False)``: a page in a fresh context; every context is closed after the test."""
    contexts = []

    def open_page(width, height, touch=False):
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=touch, has_touch=touch)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def settle(page, skip=True, timeout=60) -> str:
    """Wait until the page waits for the person (``ready``) or shows the game over (``over``); skip agents' turns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = page.evaluate("document.body.dataset.state")
        if state in ("ready", "over"):
            return state
        if skip and page.is_visible("#skip"):
            page.click("#skip", timeout=2000)
        page.wait_for_timeout(40)
    raise AssertionError(f"the page did not settle within {timeout} s")


def start_game(page, server, mode="solitaire", agents=(), coach=False, rules="yacht") -> str:
    """A new game started through the lobby; returns its secret once the page waits for the person."""
    page.goto(server.url + "/")
    page.fill("#name", "Ada")
    page.select_option("#rules", rules)
    page.check(f"input[name=mode][value={mode}]", force=True)
    for i, agent in enumerate(agents):
        page.select_option(f".agent-select >> nth={i}", agent)
    if coach:
        page.check("#coach")
    page.click("#start")
    page.wait_for_url("**/game/*")
    settle(page)
    return page.url.rsplit("/", 1)[1]


def new_game_by_api(server, mode, agents=(), coach=False) -> str:
    answer = httpx.post(server.url + "/api/games", json={"name": "Ada", "mode": mode, "agents": list(agents), "coach": coach})
    assert answer.status_code == 201, answer.text
    return answer.json()["secret"]


def score_by_api(server, secret, turns: int) -> None:
    """The person scores the first open row ``turns`` times, through the API (the agents answer each time)."""
    for _ in range(turns):
        view = httpx.get(f"{server.url}/api/games/{secret}?since=0").json()
        row = next(r["name"] for r in view["rows"] if r["name"] in view["current"]["now"])
        answer = httpx.post(f"{server.url}/api/games/{secret}/actions", json={"seq": view["seq"], "row": row})
        assert answer.status_code == 200, answer.text


def score_first_open_row(page) -> str:
    page.click("#sheet tr.row.open >> nth=0")
    return settle(page)


def in_view(page, selector) -> bool:
    return page.eval_on_selector(selector, IN_VIEW)


@pytest.mark.parametrize("size", PHONES, ids=[f"{w}x{h}" for w, h in PHONES])
@pytest.mark.parametrize("mode", ["solitaire", "table"])
def test_at_turn_five_the_dice_the_roll_button_and_an_open_row_are_in_view(open_page, server, size, mode, tmp_path):
    page = open_page(*size, touch=True)
    start_game(page, server, mode, ["greedy", "random"] if mode == "table" else (), coach=True)
    for _ in range(4):
        score_first_open_row(page)
    assert page.inner_text("#turn-title").startswith("Turn 5 ")
    assert page.is_visible("#coach")  # the coach has a card to show, and it is not in the way
    page.screenshot(path=tmp_path / f"turn5-{mode}-{size[0]}x{size[1]}.png")
    assert all(in_view(page, f"#dice .die >> nth={i}") for i in range(5)), "a die is out of view"
    assert in_view(page, "#roll"), "the Roll button is out of view"
    rows = page.locator("#sheet tr.row.open")
    assert any(rows.nth(i).evaluate(IN_VIEW) for i in range(rows.count())), "no open row is in view"
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.parametrize("size", [SHORT, *PHONES], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_agents_turn_plays_in_view_with_skip(open_page, server, size):
    page = open_page(*size, touch=size != SHORT)
    start_game(page, server, "table", ["optimal", "greedy"], coach=True)
    score_first_open_row(page)  # leaves the page scrolled where the row was
    page.click("#sheet tr.row.open >> nth=0")
    page.wait_for_selector("#agent-panel:not(.hidden)")
    assert in_view(page, "#skip"), "Skip is out of view during the agents' turns"
    assert in_view(page, "#agent-title") and in_view(page, "#agent-step")
    page.wait_for_selector("#agent-dice .die")
    assert in_view(page, "#agent-dice .die >> nth=4")
    page.click("#skip")
    assert settle(page, skip=False) == "ready"


@pytest.mark.parametrize("rules", ["yacht", "yahtzee"])
def test_four_agents_fit_a_320_px_screen_and_so_does_the_game_over(open_page, server, rules, tmp_path):
    agents = ["greedy", "random", "optimal", "random"]
    turns = {"yacht": 12, "yahtzee": 13}[rules]
    page = open_page(320, 568, touch=True)
    start_game(page, server, "table", agents, rules=rules)
    sheet = page.locator(".scroll:has(#sheet)")
    assert sheet.evaluate("box => box.scrollWidth <= box.clientWidth"), "the sheet is wider than its box"
    assert page.locator("#sheet thead th").count() == 7  # Row, You, Now and the four agents, none hidden
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=tmp_path / "four-agents-320.png")
    secret = page.url.rsplit("/", 1)[1]
    score_by_api(server, secret, turns)
    page.reload()
    page.wait_for_selector("body[data-state=over]")
    page.wait_for_selector("#over .chart svg rect")
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    boxes = page.locator("#over .scroll")
    assert boxes.count() >= 2  # the final sheets and the costliest decisions
    for i in range(boxes.count()):
        fits = boxes.nth(i).evaluate("box => box.scrollWidth <= box.clientWidth || box.classList.contains('overflows')")
        assert fits, f"table {i} of the game-over page is wider than its box, with no sign of it"
    assert page.locator("#over table.sheet tfoot td").count() == 6  # every player's total shown
    assert page.locator("#over table.sheet tbody tr").count() == turns + (3 if rules == "yahtzee" else 0)  # and the bonus lines
    widths = [box["width"] for box in (r.bounding_box() for r in page.locator("#over .chart svg rect").all()) if box]
    assert len(widths) == turns * 5 and min(widths) >= 6, f"bars {min(widths):.1f} px wide: too thin to see"
    page.screenshot(path=tmp_path / "four-agents-320-over.png", full_page=True)  # after: it resizes the window


def test_a_sheet_too_wide_even_drawn_tight_marks_its_scroll_and_keeps_the_persons_column(open_page, server):
    page = open_page(240, 568, touch=True)  # narrower than any phone: Yahtzee's sheet with four agents cannot fit
    start_game(page, server, "table", ["greedy", "random", "optimal", "random"], rules="yahtzee")
    box = page.locator(".scroll:has(#sheet)")
    assert "overflows" in box.get_attribute("class")
    assert "Scroll sideways" in box.evaluate("box => getComputedStyle(box, '::before').content")
    where = "box => [1, 2].map((n) => Math.round(box.querySelector(`thead th:nth-child(${n})`).getBoundingClientRect().left))"
    before = box.evaluate(where)  # the row names' and the person's columns
    box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    page.wait_for_timeout(100)  # a frame for the sticky cells
    assert box.evaluate("box => box.scrollLeft") > 0
    assert box.evaluate(where) == before, "scrolled sideways, the person's own column moved out of its place"
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0


def test_the_chart_axis_has_round_ticks(open_page, server):
    page = open_page(*DESKTOP)
    secret = new_game_by_api(server, "table", ["random"])
    score_by_api(server, secret, 12)
    page.goto(f"{server.url}/game/{secret}")
    page.wait_for_selector("#over .chart svg text")
    expected = {
        2.9: [0, 1, 2, 3],
        3.9: [0, 1, 2, 3, 4],
        7.8: [0, 2, 4, 6, 8],
        12.7: [0, 5, 10, 15],
        0.5: [0, 0.2, 0.4, 0.6],
        1: [0, 0.25, 0.5, 0.75, 1],
        0.04: [0, 0.01, 0.02, 0.03, 0.04],
    }
    assert page.evaluate("(maxima) => maxima.map((max) => niceTicks(max))", list(expected)) == list(expected.values())
    labels = page.locator("#over .chart svg text[text-anchor=end]").all_text_contents()  # the y axis
    values = [float(label) for label in labels]
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert values[0] == 0 and len(steps) == 1
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 2.5, 5), f"axis {labels} steps by {step}"


def test_the_roll_button_and_the_table_talk_during_the_agents_turns(open_page, server):
    page = open_page(*DESKTOP)
    start_game(page, server, "table", ["optimal"])
    page.click("#sheet tr.row.open >> nth=0")
    page.wait_for_selector("#agent-panel:not(.hidden)")
    samples = []
    while page.is_visible("#agent-panel"):
        samples.append(
            page.evaluate(
                """() => ({shown: !document.getElementById("agent-panel").classList.contains("hidden"),
                    roll: document.getElementById("roll").textContent,
                    step: document.getElementById("agent-step").textContent,
                    title: document.getElementById("agent-title").textContent,
                    log: [...document.querySelectorAll("#log li")].map((li) => li.textContent)})"""
            )
        )
        page.wait_for_timeout(100)
    samples = [s for s in samples if s["shown"]]  # the turns may end between the visibility check and the sample
    assert samples
    for sample in samples:
        assert sample["roll"] == "Waiting for optimal…", sample
        if sample["log"]:  # the table talk names the agent's row only once the display has shown it
            assert ", total" in sample["step"] and sample["log"][0].startswith(sample["title"]), sample
    settle(page, skip=False)
    assert page.locator("#log li").first.inner_text().startswith("optimal, turn 1:")


def test_the_duplicate_agents_column_says_why_it_is_empty_and_its_replay_is_not_game_over(open_page, server):
    page = open_page(*DESKTOP)
    start_game(page, server, "duplicate", ["greedy"])
    note = page.locator("#sheet-note")
    assert note.is_visible() and "greedy plays these same dice after your last row" in note.inner_text()
    assert page.locator("#sheet tfoot td").all_inner_texts()[-1] == "–"  # not a total of 0
    secret = page.url.rsplit("/", 1)[1]
    score_by_api(server, secret, 11)
    page.reload()
    settle(page)
    page.click("#sheet tr.row.open >> nth=0")  # the last row: the agent now plays the whole game on the same dice
    page.wait_for_selector("#agent-panel:not(.hidden)")
    assert page.inner_text("#roll") == "Waiting for greedy…"
    assert page.inner_text("#turn-title") == "greedy is playing"
    page.wait_for_selector("#sheet-note", state="hidden")  # its first row is on the sheet
    page.click("#skip")
    assert settle(page, skip=False) == "over"


def test_a_reload_keeps_the_held_dice_and_the_coachs_card(open_page, server):
    page = open_page(*DESKTOP)
    start_game(page, server, "solitaire", coach=True)
    score_first_open_row(page)
    card = page.inner_text("#coach")
    assert "Coach" in card
    assert re.fullmatch(r"Turn 1, after roll 1: scored \d+ in Ones", page.inner_text("#coach-decision"))  # what it grades
    page.click("#dice .die >> nth=1")
    page.click("#dice .die >> nth=3")
    dice = page.eval_on_selector_all("#dice .die", "dice => dice.map((d) => d.dataset.value)")
    page.reload()
    settle(page)
    assert page.eval_on_selector_all("#dice .die", "dice => dice.map((d) => d.dataset.value)") == dice
    held = page.eval_on_selector_all("#dice .die", "dice => dice.map((d) => d.classList.contains('held'))")
    assert held == [False, True, False, True, False]
    assert page.is_visible("#coach") and page.inner_text("#coach") == card
    page.click("#roll")  # and the roll keeps them
    settle(page)
    rolled = page.eval_on_selector_all("#dice .die", "dice => dice.map((d) => d.dataset.value)")
    assert not Counter(dice[1::2]) - Counter(rolled)  # the held dice stay (the server shows the dice sorted)


def test_a_tab_that_was_behind_says_it_has_caught_up_not_reload(open_page, server):
    first = open_page(*DESKTOP)
    secret = start_game(first, server, "solitaire")
    second = open_page(*DESKTOP)
    second.goto(f"{server.url}/game/{secret}")
    settle(second)
    score_first_open_row(first)
    second.click("#sheet tr.row.open >> nth=1")  # another row than the first tab's, which this tab has not seen
    second.wait_for_selector("#error:not(:empty)")
    settle(second)
    message = second.inner_text("#error")
    assert "reload" not in message and "moved on" in message, message
    assert second.evaluate("document.body.dataset.seq") == first.evaluate("document.body.dataset.seq")


def test_focus_shows_on_the_mode_cards_and_stays_on_a_clicked_die(open_page, server):
    page = open_page(*DESKTOP)
    page.goto(server.url + "/")
    page.focus("#rules")
    page.keyboard.press("Tab")  # onto the mode radios
    outline = page.evaluate("getComputedStyle(document.activeElement.closest('.mode')).outlineStyle")
    assert outline not in ("", "none"), "the focused mode card shows no focus"
    page.keyboard.press("ArrowRight")
    outline = page.evaluate("getComputedStyle(document.activeElement.closest('.mode')).outlineStyle")
    assert outline not in ("", "none") and page.is_checked("input[name=mode][value=table]")
    start_game(page, server, "solitaire")
    page.click("#dice .die >> nth=2")
    focused = page.evaluate("[...document.querySelectorAll('#dice .die')].indexOf(document.activeElement)")
    assert focused == 2 and "held" in page.get_attribute("#dice .die >> nth=2", "class")


@pytest.mark.parametrize("size", [(375, 740), (740, 360)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_keyboard_hints_are_not_shown_on_phones(open_page, server, size):
    phone = open_page(*size, touch=True)
    phone.goto(server.url + "/")
    assert phone.locator("text=Keys at the table").is_hidden()
    start_game(phone, server, "solitaire")
    assert phone.locator(".hint-line").is_hidden()
    desktop = open_page(*DESKTOP)
    desktop.goto(server.url + "/")
    assert desktop.locator("text=Keys at the table").is_visible()


def test_an_agent_the_server_replaced_is_named_with_why_and_who_plays_on(open_page, server):
    """The view's ``replaced`` notes (a model that could not choose, replaced by optimal) are shown on the page."""
    from tests.yacht_play.accessibility import assert_accessible

    note = {"seat": 1, "name": "greedy", "policy": "ppo:odd.safetensors", "by": "optimal", "reason": "NaN at 1 roll left"}

    def with_a_replaced_agent(route):
        answer = route.fetch()
        body = answer.json()
        if isinstance(body, dict) and "game" in body:
            body["replaced"] = [note]
        route.fulfill(response=answer, json=body)

    page = open_page(*PHONES[0])
    start_game(page, server, "table", ["greedy"])
    assert page.is_hidden("#replaced")  # nothing replaced, nothing said
    page.route("**/api/games/*", with_a_replaced_agent)
    page.reload()
    settle(page)
    shown = page.inner_text("#replaced")
    assert shown == "ppo:odd.safetensors could not choose (NaN at 1 roll left); optimal plays its seat from here on."
    box = page.locator("#replaced").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONES[0][0]  # a long reason wraps within the screen
    assert_accessible(page, "the game with a replaced agent")
