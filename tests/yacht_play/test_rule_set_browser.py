"""The browser game under Yahtzee rules, in Debian's chromium: the rule set picked in the lobby, the bonus
lines of the sheet, joker values in the now column, and the totals with every bonus.

Skipped, with the reason, where playwright or /usr/bin/chromium is missing. Screenshots go to the
test's temporary folder.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve tests need httpx")

from tests.yacht_play import test_serve_browser as browser_tests  # noqa: E402
from tests.yacht_play.accessibility import assert_accessible  # noqa: E402
from tests.yacht_play.test_rule_set_play import dealt_faces  # noqa: E402
from tests.yacht_play.test_serve_browser import play_turn_by_clicking, settle, shown_dice, stored  # noqa: E402
from yacht_env.rules import YAHTZEE  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.match import Match  # noqa: E402
from yacht_play.records import GameRecord  # noqa: E402

browser, server, page = browser_tests.browser, browser_tests.server, browser_tests.page  # the browser tests' fixtures


def sheet_line(page, kind: str) -> str:
    return page.inner_text(f"#sheet tr[data-bonus={kind}]")


def test_the_lobby_names_the_rule_sets_as_the_server_does(page, server):
    import httpx

    titles = httpx.get(server.url + "/api/agents", timeout=10).json()["rule_titles"]
    page.goto(server.url + "/")
    page.wait_for_selector("#rules option[value=yatzy]", state="attached")
    shown = dict(page.eval_on_selector_all("#rules option", "options => options.map((o) => [o.value, o.textContent])"))
    assert shown == titles and shown["yatzy"] == "Yatzy (Scandinavian)"


def test_a_yahtzee_game_picked_in_the_lobby_shows_its_rows_and_bonus_lines(page, server, tmp_path):
    page.goto(server.url + "/")
    page.fill("#name", "Yolanda")
    page.select_option("#rules", "yahtzee")
    page.click("#start")
    page.wait_for_url("**/game/*")
    settle(page)
    assert page.inner_text("#sheet-title") == "Score sheet · Yahtzee"
    assert page.locator("#sheet tr.row").count() == 13
    assert re.fullmatch(r"Upper subtotal\s+0/63\s*", sheet_line(page, "upper-subtotal"))
    assert sheet_line(page, "upper-bonus").startswith("Bonus (35 at 63)")
    assert sheet_line(page, "yahtzee-bonus").startswith("Yahtzee bonus (100 each)")
    for _ in range(3):
        play_turn_by_clicking(page)
    record = stored(server, page.url.rsplit("/", 1)[1])
    assert record.header["rules"] == "yahtzee"
    assert page.inner_text("#sheet tfoot").split()[-1] == str(record.decisions[-1]["total"])


def test_bonuses_and_a_joker_in_the_browser(page, server, tmp_path):
    # four Yahtzees already played (50 in the box, then 6s, 5s and 4s: upper subtotal 75), a fifth of sixes to come
    header = {
        "schema": 1,
        "type": "game",
        "game_id": "dealt-browser",
        "mode": "solitaire",
        "rules": "yahtzee",
        "seed": 7,
        "coach": False,
        "time": "2026-11-30T20:00:00.000+00:00",
        "players": [
            {
                "seat": 0,
                "name": "Jo",
                "kind": "human",
                "policy": None,
                "seed": 7,
                "faces": dealt_faces([[6] * 5, [6] * 5, [5] * 5, [4] * 5, [6] * 5, [1, 2, 3, 4, 6]]),
            }
        ],
    }
    match = Match.resume(GameRecord(header), dice_as_recorded=True)  # a stream no seed deals: as a server's own row
    first = YAHTZEE.dice.num_rerolls
    for row in ("yahtzee", "sixes", "fives", "fours"):
        match.play(first + YAHTZEE.category_index[row])
    engine = db.connect(str(server.db))
    secret = "dealt-browser-" + "x" * 20
    try:  # stored as the server's own game: yacht import refuses dice that no seed deals
        db.insert_game(engine, "dealt-browser", secret, "Jo", header, match.decisions)
    finally:
        engine.dispose()
    page.goto(f"{server.url}/game/{secret}")
    settle(page)
    assert shown_dice(page) == [6] * 5
    assert re.fullmatch(r"Upper subtotal\s+75/63\s*", sheet_line(page, "upper-subtotal"))
    assert re.fullmatch(r"Bonus \(35 at 63\)\s+35\s*", sheet_line(page, "upper-bonus"))
    assert re.fullmatch(r"Yahtzee bonus \(100 each\)\s+300\s*", sheet_line(page, "yahtzee-bonus"))
    assert page.inner_text("#sheet tfoot").split()[-1] == "460"
    # a joker: the sixes box is filled, so the lower rows take it at joker values
    assert page.inner_text("#sheet tr[data-row=large_straight] td.now") == "+40"
    assert page.inner_text("#sheet tr[data-row=full_house] td.now") == "+25"
    page.screenshot(path=tmp_path / "yahtzee-bonus-lines.png", full_page=True)
    assert_accessible(page, "a Yahtzee joker, its barred rows shown")
    page.click("#sheet tr[data-row=large_straight]")
    settle(page)
    assert re.fullmatch(r"Yahtzee bonus \(100 each\)\s+400\s*", sheet_line(page, "yahtzee-bonus"))
    assert page.inner_text("#sheet tfoot").split()[-1] == "600"
    assert page.inner_text("#sheet tr[data-row=large_straight]").split()[-1] == "40"
    assert stored(server, secret).decisions[-1]["total"] == 600
