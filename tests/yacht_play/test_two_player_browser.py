"""The browser at a table of two against ``exact2``: the lobby offers it where it sits, the coach and the game-over
page grade decisions in chances of winning against the solved game (Yacht on four rows, served in this process).

Skipped, with the reason, where playwright or /usr/bin/chromium is missing. Screenshots go to the test's folder.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("uvicorn", reason="the serve tests need uvicorn")

from tests.yacht_play import test_serve_browser as browser_tests  # noqa: E402
from tests.yacht_play.serve_support import served_here  # noqa: E402
from tests.yacht_play.test_two_player_grading import small  # noqa: E402, F401  (a fixture)

browser = browser_tests.browser  # the fixture: one Chromium per module
settle = browser_tests.settle
PHONE, DESKTOP = browser_tests.PHONE, browser_tests.DESKTOP


@pytest.fixture(scope="module")
def server(small, tmp_path_factory):  # noqa: F811
    """``yacht serve --agents exact2,optimal`` on the small rules, in a thread of this process (which knows them)."""
    from yacht_play import store
    from yacht_play.serve.games import GameService

    rules, _ = small
    service = GameService(store.connect(str(tmp_path_factory.mktemp("serve") / "yacht.db")), ["exact2", "optimal"], rules)
    with served_here(service) as url:
        yield url, service


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_coached_game_against_exact2_is_graded_in_chances_of_winning(browser, server, size, tmp_path):
    url, service = server
    context = browser.new_context(viewport=size)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url + "/")
    page.fill("#name", "ann")
    page.check("input[name=mode][value=duplicate]", force=True)
    assert "exact2" not in page.eval_on_selector_all(".agent-select option", "o => o.map(x => x.value)")
    page.check("input[name=mode][value=table]", force=True)
    page.select_option(".agent-select >> nth=0", "exact2")
    assert page.eval_on_selector_all(".agent-select", "s => s.map(x => x.disabled)") == [False, True, True, True]
    seconds = page.eval_on_selector_all(".agent-select >> nth=1 >> option", "o => o.map(x => x.value)")
    assert "exact2" not in seconds  # a table of two's agent is not offered in a seat that makes the table larger
    page.check("#coach")
    page.click("#start")
    page.wait_for_url("**/game/*")
    assert settle(page) == "ready"
    page.click("#dice .die >> nth=0")  # keep one die, roll the others
    page.click("#roll")
    settle(page)
    secret = page.url.rsplit("/", 1)[1]
    match = service.live(secret).match
    from agents.two_player.grading import TwoPlayerGrader

    graded = TwoPlayerGrader(match.rules).grade_decisions(match.decisions)
    verdict = page.inner_text("#coach-win")
    if graded.loss[0] > 0:
        assert f"cost you {100 * graded.loss[0]:.2f} percentage points of your chance of winning" in verdict
        assert f"{100 * graded.chosen[0]:.1f}% against {100 * graded.chances[0].max():.1f}%" in verdict
    else:
        assert f"is the best choice (chance of winning {100 * graded.chosen[0]:.1f}%)" in verdict
    page.locator("#coach").screenshot(path=str(tmp_path / "coach.png"))
    while settle(page) != "over":
        page.click("#sheet tr.row.open >> nth=0")
    page.wait_for_selector("#win-grade")
    graded = TwoPlayerGrader(match.rules).grade_decisions(match.decisions)
    mine = [i for i, d in enumerate(match.decisions) if d["kind"] == "human"]
    text = page.inner_text("#win-grade")
    assert f"{100 * graded.loss[mine].mean():.2f} pp" in text and f"{100 * graded.loss[mine].sum():.2f} pp" in text
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]  # nothing wider than the screen
    page.locator("#win-grade").screenshot(path=str(tmp_path / "over.png"))
    context.close()
    assert not errors, errors
