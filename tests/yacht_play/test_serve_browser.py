"""``yacht serve`` in a real browser: Debian's chromium driven by Playwright.

Skipped, with the reason in the summary, where playwright or /usr/bin/chromium is missing. Screenshots
go to the test's temporary folder; ``pytest -m slow -k docs`` writes the documentation's into docs/.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve tests need httpx")

from tests.yacht_play.serve_support import CHROMIUM, CHROMIUM_ARGS, ROOT, Server, chromium_or_skip  # noqa: E402
from yacht_play import store as db  # noqa: E402

PHONE = {"width": 375, "height": 740}
DESKTOP = {"width": 1200, "height": 900}


@pytest.fixture(scope="module")
def browser():
    sync_playwright = chromium_or_skip()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("serve") / "yacht.db").start()
    yield server
    server.stop()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: "Content Security Policy" in message.text and errors.append(message.text))
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


def start_game(page, server, name, mode="solitaire", agents=(), coach=False):
    page.goto(server.url + "/")
    page.fill("#name", name)
    page.check(f"input[name=mode][value={mode}]", force=True)
    for i, agent in enumerate(agents):
        page.select_option(f".agent-select >> nth={i}", agent)
    if coach:
        page.check("#coach")
    page.click("#start")
    page.wait_for_url("**/game/*")
    return settle(page)


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
    raise AssertionError(f"the page did not settle within {timeout} s (state {state!r})")


def shown_dice(page) -> list[int]:
    return [int(v) for v in page.eval_on_selector_all("#dice .die", "dice => dice.map(d => d.dataset.value)")]


def play_turn_by_clicking(page) -> str:
    """Hold the first die and roll once, then score the first open row; return the page's state after."""
    if page.is_enabled("#roll"):
        page.click("#dice .die >> nth=0")
        assert "held" in page.get_attribute("#dice .die >> nth=0", "class")
        page.click("#roll")
        if settle(page) == "over":
            return "over"
    page.click("#sheet tr.row.open >> nth=0")
    return settle(page)


def stored(server, secret):
    engine = db.connect(str(server.db))
    try:
        return db.load_record(engine, db.game_row(engine, secret))
    finally:
        engine.dispose()


def secret_of(page) -> str:
    return page.url.rsplit("/", 1)[1]


def test_a_whole_solitaire_game_by_clicking(page, server, tmp_path):
    start_game(page, server, "Clicker")
    page.screenshot(path=tmp_path / "solitaire-start.png")
    turns = 0
    while play_turn_by_clicking(page) != "over":
        turns += 1
    assert turns == 11  # the twelfth turn ends the game
    page.screenshot(path=tmp_path / "solitaire-over.png", full_page=True)
    record = stored(server, secret_of(page))
    assert record.finished and len([d for d in record.decisions if d["points"] is not None]) == 12
    assert page.inner_text(".winner") == f"You scored {record.end['totals'][0]}"
    page.click("text=Clicker's games")
    page.wait_for_selector("table.history tbody tr")
    assert str(record.end["totals"][0]) in page.inner_text("table.history")


def test_a_game_against_an_agent_with_the_keyboard(page, server, tmp_path):
    start_game(page, server, "Keys", "table", ["optimal"])
    dice = shown_dice(page)
    page.keyboard.press("1")
    page.keyboard.press("2")
    assert page.eval_on_selector_all("#dice .die.held", "d => d.length") == 2
    page.keyboard.press("r")
    settle(page)
    assert not Counter(dice[:2]) - Counter(shown_dice(page))  # the held dice stay
    assert page.inner_text("#turn-sub") == "roll 2 of 3"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    # the agent's turn is shown step by step
    page.wait_for_selector("#agent-panel:not(.hidden)")
    assert "optimal, turn 1" in page.inner_text("#agent-title")
    page.screenshot(path=tmp_path / "agent-turn.png")
    assert settle(page, skip=False) == "ready"
    assert page.is_hidden("#agent-panel")
    record = stored(server, secret_of(page))
    assert [d["seat"] for d in record.decisions][-1] == 1 and record.decisions[-1]["points"] is not None
    assert page.inner_text("#sheet tfoot").split()[-1] == str(record.decisions[-1]["total"])
    while play_turn_by_clicking(page) != "over":
        pass
    page.screenshot(path=tmp_path / "agent-over.png", full_page=True)
    totals = stored(server, secret_of(page)).end["totals"]
    assert page.locator("#over table.sheet tfoot td").all_inner_texts()[1:] == [str(t) for t in totals]


def test_a_duplicate_game_with_the_coach(page, server, tmp_path):
    start_game(page, server, "Dup", "duplicate", ["greedy"], coach=True)
    assert page.is_hidden("#coach")
    play_turn_by_clicking(page)
    coach = page.inner_text("#coach")
    assert "Coach" in coach and "expected" in coach
    assert page.locator("#coach .option").count() >= 2
    page.screenshot(path=tmp_path / "coach.png", full_page=True)
    while play_turn_by_clicking(page) != "over":
        assert "null" not in page.inner_text("#coach")  # whether or not the choice is among the listed options
    assert page.locator("table.turns tbody tr").count() == 12
    page.screenshot(path=tmp_path / "duplicate-over.png", full_page=True)
    record = stored(server, secret_of(page))
    person = [d for d in record.decisions if d["seat"] == 0]
    agent = [d for d in record.decisions if d["seat"] == 1]
    assert [d["dice"] for d in person if d["roll"] == 1] == [d["dice"] for d in agent if d["roll"] == 1]


def test_kill_the_server_and_resume_in_the_browser(page, server, tmp_path, capsys):
    start_game(page, server, "Phoenix", "table", ["random"])
    for _ in range(3):
        play_turn_by_clicking(page)
    page.click("#dice .die >> nth=4")
    page.click("#roll")
    settle(page)
    before = (page.evaluate("document.body.dataset.seq"), shown_dice(page), page.inner_text("#sheet"))
    secret = secret_of(page)
    acknowledged = int(before[0])
    server.kill()
    page.click("#sheet tr.row.open >> nth=0")  # the server is gone: the page says so and keeps its position
    page.wait_for_selector(
        "#error:not(:empty)", state="attached"
    )  # a selector, not a string to eval: the page's CSP forbids eval
    assert "cannot be reached" in page.inner_text("#error")
    server.start()
    found = len(stored(server, secret).decisions)
    with capsys.disabled():
        print(f"\nbrowser kill-and-resume: {acknowledged} decisions acknowledged before SIGKILL, {found} found after restart")
    assert found == acknowledged
    page.reload()
    settle(page)
    after = (page.evaluate("document.body.dataset.seq"), shown_dice(page), page.inner_text("#sheet"))
    assert after == before
    page.screenshot(path=tmp_path / "resumed.png")
    play_turn_by_clicking(page)  # and the game goes on from there
    assert len(stored(server, secret).decisions) > acknowledged


def test_the_phone_viewport(browser, server, tmp_path):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = context.new_page()
    overflow = "document.scrollingElement.scrollWidth - window.innerWidth"
    try:
        page.goto(server.url + "/")
        assert page.evaluate(overflow) <= 0
        page.screenshot(path=tmp_path / "phone-lobby.png", full_page=True)
        start_game(page, server, "Pocket", "table", ["greedy", "random"], coach=True)
        assert page.evaluate(overflow) <= 0
        box = page.locator("#dice .die >> nth=4").bounding_box()
        assert box["x"] + box["width"] <= PHONE["width"] and box["width"] >= 40  # five dice fit, big enough to tap
        page.tap("#dice .die >> nth=0")
        page.tap("#roll")
        settle(page)
        page.screenshot(path=tmp_path / "phone-table.png", full_page=True)
        while play_turn_by_clicking(page) != "over":
            pass
        assert page.evaluate(overflow) <= 0
        page.screenshot(path=tmp_path / "phone-over.png", full_page=True)
    finally:
        context.close()


@pytest.mark.slow
def test_docs_screenshots(browser, tmp_path):
    """The pictures of docs/people.md: the lobby, a game against the shipped ppo:yacht with the coach, the game over."""
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    server = Server(tmp_path / "yacht.db", agents="random,greedy,optimal,ppo:yacht").start(timeout=600)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        page.fill("#name", "Ada")
        page.check("input[name=mode][value=table]", force=True)
        page.select_option(".agent-select >> nth=0", "ppo:yacht")
        page.check("#coach")
        page.screenshot(path=docs / "serve-lobby.png")
        page.click("#start")
        page.wait_for_url("**/game/*")
        settle(page)
        for _ in range(3):
            play_turn_by_clicking(page)
        page.click("#dice .die >> nth=2")
        page.click("#roll")
        settle(page)
        page.wait_for_timeout(600)  # the re-rolled dice have landed
        page.screenshot(path=docs / "serve-game-ppo-coach.png", full_page=True)
        while play_turn_by_clicking(page) != "over":
            pass
        page.screenshot(path=docs / "serve-game-over.png", full_page=True)
        page.set_viewport_size(PHONE)
        page.reload()
        settle(page)
        page.wait_for_timeout(300)
        page.screenshot(path=docs / "serve-game-over-phone.png", full_page=True)
    finally:
        context.close()
        server.stop()
    assert all(
        Path(docs / name).stat().st_size > 10_000
        for name in ["serve-lobby.png", "serve-game-ppo-coach.png", "serve-game-over.png", "serve-game-over-phone.png"]
    )


def test_the_start_button_waits_until_the_lobby_handles_the_form(page, server):
    # the lobby asks the server for its agents before it takes the form over: a click (or Enter) before that
    # would send the form as a plain GET, reload the lobby and start no game
    held = []
    page.route("**/api/agents", lambda route: held.append(route))
    page.goto(server.url + "/")
    while not held:
        page.wait_for_timeout(20)
    assert page.is_disabled("#start")
    page.fill("#name", "Early")
    page.press("#name", "Enter")
    page.wait_for_timeout(200)
    assert page.url == server.url + "/"
    held[0].continue_()
    page.wait_for_selector("#start:not([disabled])")  # a selector, not a script: the page's CSP forbids eval
    page.click("#start")
    page.wait_for_url("**/game/*")
    assert settle(page) == "ready"


def test_a_name_with_markup_is_shown_as_text(page, server):
    import httpx

    name = "<img src=x onerror=alert(1)>"
    secret = httpx.post(server.url + "/api/games", json={"name": name, "mode": "solitaire"}).json()["secret"]
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in (f"/game/{secret}", f"/player/{name}"):
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
        assert name in page.inner_text("body")
        assert page.locator("img").count() == 0
    assert dialogs == []


def test_the_pages_keep_to_their_content_security_policy(browser, page, server):
    """Every page under the server's CSP, a game with an agent and the coach too (their bars set inline styles):
    the page fixture fails on any violation Chromium reports; an injected inline script does not run.
    """
    answer = page.goto(server.url + "/")
    assert "script-src 'self'" in answer.headers["content-security-policy"] and answer.headers["x-frame-options"] == "DENY"
    start_game(page, server, "Csp", "table", ["greedy"], coach=True)
    for _ in range(2):
        play_turn_by_clicking(page)
    assert page.locator("#coach .option").count() >= 2
    for path in ("/player/Csp", "/report"):
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
    other = browser.new_context(viewport=DESKTOP)  # its violation must not fail the page fixture
    injected = other.new_page()
    injected.goto(server.url + "/")
    ran = injected.evaluate(
        """() => new Promise((done) => {
            document.addEventListener("securitypolicyviolation", () => done("blocked"));
            const script = document.createElement("script");
            script.textContent = "window.injected = true";
            document.body.append(script);
            setTimeout(() => done(window.injected ? "ran" : "blocked"), 500);
        })"""
    )
    other.close()
    assert ran == "blocked"


@pytest.mark.parametrize("size", [{"width": 390, "height": 844}, DESKTOP], ids=["phone", "desktop"])
def test_the_coach_card_gives_each_option_its_learned_chance_beside_on_one_card_that_fits(browser, tmp_path, monkeypatch, size):
    """At a Yacht table of three with a planN file as the shipped planner: each option's line names its chance of
    winning and, beside it, its learned one as the card's JSON gives them, and no line runs out of its bar."""
    from tests.agents.test_planN import ship_planN
    from tests.yacht_play.serve_support import served_here
    from yacht_env.rules import YACHT
    from yacht_play.serve.games import GameService

    ship_planN(monkeypatch, tmp_path, YACHT, seed=3)
    service = GameService(db.connect(str(tmp_path / "yacht.db")), ["optimal", "greedy"], YACHT)
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        with served_here(service) as url:
            start_game(page, type("At", (), {"url": url}), "ann", "table", ["optimal", "greedy"], coach=True)
            settle(page)
            page.click("#dice .die >> nth=0")
            page.click("#roll")
            settle(page)
            card = page.evaluate("kept('coach')")  # the card's JSON, as the page keeps it
            shown = page.inner_text("#coach")
            lines = page.eval_on_selector_all(
                "#coach .option .bar", "bars => bars.map(b => [b.innerText, b.scrollWidth - b.clientWidth])"
            )
            page.screenshot(path=tmp_path / "coach-learned.png", full_page=True)
    finally:
        context.close()
    assert "learned win: as the shipped table planner learned it in self-play, not exact" in shown
    assert len(lines) == len(card["options"]) + (card["chosen"] not in [o["label"] for o in card["options"]])
    for option, (text, overflow) in zip(card["options"], lines):
        text = text.replace("\xa0", " ")
        assert (
            f"{option['label']} · win {round(100 * option['win'])}% · learned win {round(100 * option['learned_win'])}%" in text
        )
    assert all(overflow <= 0 for _, overflow in lines), lines  # the chosen one's line, listed or not, too
