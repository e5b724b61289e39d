"""Decisions at a table of two graded in chances of winning against the solved game: the terminal's coach and end
screen, ``yacht analyze``, the server's coach and game-over summary, and ``exact2`` at the tables it sits at.

The games are Yacht on four of its rows, solved into a fresh cache folder and named in ``RULE_SETS`` for the
module, so that records, ``yacht play`` and the server take it by name.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from agents.policies.exact2 import TIE_TOLERANCE
from agents.registry import make_opponents
from agents.two_player import solve_two_player
from agents.two_player.__main__ import sub_game
from agents.two_player.grading import TwoPlayerGrader
from yacht_env.actions import ActionLayout
from yacht_env.rules import RULE_SETS, YACHT
from yacht_play.analyze import main as analyze_main
from yacht_play.match import Match, Player
from yacht_play.records import RecordError, RecordWriter, read_records
from yacht_play.terminal import ScriptedConsole
from yacht_play.terminal import main as play_main

ROWS = "ones,threes,fives,full_house"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Yacht on four rows, named in ``RULE_SETS``, with its two-player game solved into a fresh cache folder."""
    rules = sub_game(YACHT, ROWS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(RULE_SETS, rules.name, rules)
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield rules, solve_two_player(rules)


@pytest.fixture
def no_solution(small, tmp_path, monkeypatch):
    """The same rules with an empty cache folder and nothing loaded: the solution is not computed."""
    import agents.two_player as two_player

    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(two_player, "_solutions", type(two_player._solutions)())
    return small[0]


def agents_game(rules, seed, names=("exact2", "optimal")):
    """A table of two agents played out, with each decision's state as the seats saw it before it."""
    match = Match.new([Player(n.split(":")[0] + str(i), "agent", n) for i, n in enumerate(names)], seed, "table", rules=rules)
    states = []
    while not match.finished:
        seat = match.current
        other = match.seats[1 - seat.index]
        states.append((seat.open_bits, other.open_bits, seat.total - other.total, list(seat.dice), seat.rolls_left))
        match.play_agent()
    return match, states


def test_recorded_decisions_lose_what_the_solution_says(small):
    rules, solution = small
    match, states = agents_game(rules, 5)
    graded = TwoPlayerGrader(rules).grade_decisions(match.decisions)
    expected = []
    for (mover, other, lead, dice, rolls_left), decision in zip(states, match.decisions):
        q = solution.action_values(mover, other, lead, dice, rolls_left)
        expected.append(q.max() - q[decision["action"]])
    np.testing.assert_allclose(graded.loss, expected, atol=1e-12)
    seats = np.array([d["seat"] for d in match.decisions])
    assert (graded.loss[seats == 0] <= TIE_TOLERANCE).all()  # exact2 plays the solution
    with pytest.raises(ValueError, match="comes without the decisions before it"):
        TwoPlayerGrader(rules).grade_decisions(match.decisions[3:])


def test_analyze_grades_a_two_player_record_in_percentage_points(small, tmp_path, capsys):
    rules, _ = small
    path = tmp_path / "games.jsonl"
    writer = RecordWriter(path)
    matches = []
    for seed in (3, 4, 5):
        match = Match.new([Player("ann", "agent", "optimal"), Player("ex", "agent", "exact2")], seed, "table", rules=rules)
        match.record_to(writer)
        while not match.finished:
            match.play_agent()
        matches.append(match)
    writer.close()
    solo = Match.new([Player("ann", "agent", "optimal")], 6, "evaluation", rules=rules)
    assert analyze_main([str(path), "--json", str(tmp_path / "grades.json")]) == 0
    out = capsys.readouterr().out
    assert "loss per decision, pp" in out and "loss per game, pp" in out
    assert "ann: costliest" in out and "decisions in chance of winning" in out
    grades = json.loads((tmp_path / "grades.json").read_text())
    decisions = [d for m in matches for d in m.decisions]
    loss = 100 * TwoPlayerGrader(rules).grade_decisions(decisions).loss
    for player in grades["players"]:
        mine = np.array([d["player"] == player["name"] for d in decisions])
        assert player["win_decisions"] == mine.sum()
        assert player["win_loss_per_decision"] == pytest.approx(loss[mine].mean())
        assert player["win_loss_per_game"] == pytest.approx(loss[mine].sum() / 3)
    ann = next(p for p in grades["players"] if p["name"] == "ann")
    worst = loss[[d["player"] == "ann" for d in decisions]].max()
    assert ann["win_worst"] and ann["win_worst"][0]["loss"] == pytest.approx(worst)
    # a solitaire record keeps today's grading: nothing in chances of winning
    writer = RecordWriter(tmp_path / "solo.jsonl")
    solo.record_to(writer)
    while not solo.finished:
        solo.play_agent()
    writer.close()
    assert analyze_main([str(tmp_path / "solo.jsonl")]) == 0
    assert " pp" not in capsys.readouterr().out


def test_a_player_s_costliest_decisions_give_their_chances_of_winning_in_percent_as_the_solution_has_them(small):
    from yacht_play.coach import Grader, grade_chances, report_players

    rules, solution = small
    match, states = agents_game(rules, 5, ("greedy", "exact2"))
    games = [match.game_record()]
    reports = report_players(games, Grader(rules))
    assert grade_chances(reports, games, rules, worst=len(states)) is None
    # a record that lacks what the two-player grading reads is refused in one line, whatever it lacks
    for missing in ("game_id", "seat", "open"):
        broken = dataclasses.replace(
            games[0], decisions=[{k: v for k, v in d.items() if k != missing} for d in games[0].decisions]
        )
        with pytest.raises(RecordError, match="^a decision record does not describe a two-player position: "):
            grade_chances(report_players(games, Grader(rules)), [broken], rules, worst=1)
    greedy = next(report for report in reports if report.name == "greedy0")
    at = {(d["turn"], d["roll"]): i for i, d in enumerate(match.decisions) if d["player"] == "greedy0"}
    assert greedy.win_worst  # greedy gives some chance of winning away against the solved game
    for entry in greedy.win_worst:
        i = at[entry["turn"], entry["roll"]]
        chances = solution.action_values(*states[i])
        assert entry["chance_chosen"] == pytest.approx(100 * chances[match.decisions[i]["action"]], abs=1e-9)
        assert entry["chance_best"] == pytest.approx(100 * chances.max(), abs=1e-9)
        assert entry["loss"] == pytest.approx(entry["chance_best"] - entry["chance_chosen"], abs=1e-9) and entry["loss"] > 0


def test_analyze_says_how_to_compute_a_missing_solution(small, tmp_path, capsys):
    rules, _ = small
    match, _ = agents_game(rules, 3, ("optimal", "greedy"))
    path = tmp_path / "games.jsonl"
    writer = RecordWriter(path)
    match.record_to(writer)
    writer.close()
    import agents.two_player as two_player

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path / "empty"))
        patch.setattr(two_player, "_solutions", type(two_player._solutions)())
        assert analyze_main([str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the console wraps the line
    assert f"`python -m agents.two_player --rules {rules.name}` computes it" in out
    assert "loss per decision, pp" not in out


def test_the_terminal_coach_against_exact2_says_what_each_decision_cost_in_chance_of_winning(small, tmp_path):
    rules, _ = small
    record = tmp_path / "game.jsonl"
    commands = ["s full_house", "s ones", "s threes", "s fives"]  # each row on the turn's first roll
    console = ScriptedConsole(commands)
    argv = ["--vs", "exact2", "--coach", "--rules", rules.name, "--seed", "11", "--record", str(record)]
    assert play_main(argv, console) == 0
    decisions = read_records(record).games[0].decisions
    graded = TwoPlayerGrader(rules).grade_decisions(decisions)
    text = " ".join(console.text.split())
    mine = [i for i, d in enumerate(decisions) if d["kind"] == "human"]
    assert len(mine) == 4
    for i in mine:
        if graded.loss[i] <= 0:
            assert f"is best (chance of winning {100 * graded.chosen[i]:.1f}%)" in text
        else:
            assert f"you lost {100 * graded.loss[i]:.1f} pp of your chance of winning" in text
    assert f"{100 * graded.loss[mine].mean():.2f} pp per decision" in text  # the end screen
    shown, width = console.text.splitlines(), len("exact2")
    for seat, name in enumerate(("you", "exact2")):  # each seat's own decisions, the agent's too
        lost = 100 * graded.loss[[i for i, d in enumerate(decisions) if d["seat"] == seat]]
        assert len(lost) >= 4
        line = f"  {name:<{width}}  {len(lost):>3} decisions  {lost.mean():.2f} pp per decision  {lost.sum():6.2f} pp in all"
        assert line in shown
    assert shown[-1] == f"Record: {record}   details: yacht analyze {record}"
    options = [line for line in shown if line.startswith("       options:")]
    assert len(options) == 4  # each option's exact chance in tenths of a percent, which whole percents would not tell apart
    for line in options:
        figures = re.findall(r"\(win ([^%]*)%", line)
        assert figures and all(re.fullmatch(r"\d{1,3}\.\d", figure) for figure in figures), line


def test_the_terminal_coach_says_how_to_compute_a_missing_solution(no_solution, tmp_path):
    console = ScriptedConsole(["s full_house", "s ones", "s threes", "s fives"])
    argv = ["--vs", "optimal", "--coach", "--rules", no_solution.name, "--seed", "11", "--record", str(tmp_path / "g.jsonl")]
    assert play_main(argv, console) == 0
    command = f"`python -m agents.two_player --rules {no_solution.name}` computes it"
    said = [i for i, line in enumerate(console.output) if command in line]
    first_prompt = next(i for i, line in enumerate(console.output) if line.startswith("turn 1 roll 1>"))
    assert said[0] < first_prompt  # the coach says so as the game starts, and the end screen again
    assert len(said) == 2 and "to win:" not in console.text


def test_exact2_is_refused_at_a_table_of_three_in_one_line(small, tmp_path, capsys):
    rules, _ = small
    argv = ["--vs", "exact2", "--vs", "optimal", "--rules", rules.name, "--record", str(tmp_path / "g.jsonl")]
    assert play_main(argv, ScriptedConsole([])) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "agent 'exact2' plays at a table of 2 players; this table has 3" in error


def test_exact2_is_a_table_opponent(small):
    import gymnasium as gym

    rules, _ = small
    env = gym.make("YachtTable-v0", rules=rules, opponents=make_opponents(["exact2"], rules=rules))
    observation, info = env.reset(seed=1)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[-1])
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    with pytest.raises(ValueError, match="plays at a table of 2 players; this table has 3"):
        make_opponents(["exact2", "optimal"], rules=rules)


def serve_client(rules, tmp_path, agents):
    pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
    pytest.importorskip("httpx", reason="the serve tests need httpx")
    import warnings

    with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from yacht_play import store
    from yacht_play.serve.app import create_app
    from yacht_play.serve.games import GameService

    service = GameService(store.connect(str(tmp_path / "yacht.db")), agents, rules)
    return service, TestClient(create_app(service))


def test_the_server_offers_exact2_at_a_table_of_two_only_and_grades_it_in_chances(small, tmp_path):
    rules, _ = small
    service, client = serve_client(rules, tmp_path, ["exact2", "optimal"])
    with client:
        offer = {a["policy"]: a for a in client.get("/api/agents").json()["agents"]}
        assert offer["exact2"]["table_sizes"] == [2, 2] and offer["exact2"]["alone"] is False
        for mode, agents in (("table", ["exact2", "optimal"]), ("duplicate", ["exact2"])):
            body = {"name": "ann", "mode": mode, "agents": agents, "coach": True, "rules": rules.name}
            refused = client.post("/api/games", json=body)
            assert refused.status_code == 400 and "\n" not in refused.json()["error"], refused.text
        assert (
            "plays at a table of 2 players; this table has 3"
            in client.post(
                "/api/games", json={"name": "ann", "mode": "table", "agents": ["exact2", "optimal"], "rules": rules.name}
            ).json()["error"]
        )
        body = {"name": "ann", "mode": "table", "agents": ["exact2"], "coach": True, "rules": rules.name}
        secret = client.post("/api/games", json=body).json()["secret"]
        view = client.get(f"/api/games/{secret}").json()
        coaches = []
        while not view["finished"]:
            row = next(r["name"] for r in view["rows"] if r["name"] in view["current"]["now"])
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": row}).json()
            coaches.append(view["coach"])
        summary = client.get(f"/api/games/{secret}/summary").json()
    from tests.yacht_play.test_serve_api import SUMMARY, VIEW, check_fits

    check_fits(view, VIEW)  # what a page sees: plain values, under keys the views declare
    check_fits(summary, SUMMARY)
    decisions = service.live(secret).match.decisions
    graded = TwoPlayerGrader(rules).grade_decisions(decisions)
    mine = [i for i, d in enumerate(decisions) if d["kind"] == "human"]
    for coach, i in zip(coaches, mine, strict=True):
        assert coach["win_exact"] and coach["win_loss"] == pytest.approx(graded.loss[i])
        assert coach["chosen_win"] == pytest.approx(graded.chosen[i])
        assert coach["win_best_chance"] == pytest.approx(graded.chances[i].max())
    person, agent = summary["seats"]
    assert person["win_decisions"] == len(mine) and summary["win_note"] is None
    assert person["win_loss_per_decision"] == pytest.approx(100 * graded.loss[mine].mean())
    assert person["win_loss_per_game"] == pytest.approx(100 * graded.loss[mine].sum())
    assert agent["win_loss_per_decision"] <= 100 * TIE_TOLERANCE


def test_the_server_refuses_exact2_without_its_solution_in_one_line_and_says_how_to_compute_it(no_solution, tmp_path):
    with pytest.raises(ValueError) as refused:
        serve_client(no_solution, tmp_path, ["exact2"])
    assert "\n" not in str(refused.value) and str(refused.value).startswith("--agents: ")
    assert f"`python -m agents.two_player --rules {no_solution.name}` computes it" in str(refused.value)
    service, client = serve_client(no_solution, tmp_path, ["optimal"])
    with client:
        body = {"name": "ann", "mode": "table", "agents": ["optimal"], "coach": True, "rules": no_solution.name}
        secret = client.post("/api/games", json=body).json()["secret"]
        view = client.get(f"/api/games/{secret}").json()
        while not view["finished"]:
            row = next(r["name"] for r in view["rows"] if r["name"] in view["current"]["now"])
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": row}).json()
            assert "computes it" in view["coach"]["win_note"] and "win_exact" not in view["coach"]
        summary = client.get(f"/api/games/{secret}/summary").json()
    assert "computes it" in summary["win_note"] and summary["seats"][0]["win_decisions"] == 0


def test_the_coached_screens_fit_a_short_terminal_counting_the_lines_that_wrap(small, tmp_path):
    rules, _ = small
    for height in range(15, 21):  # the four-row sheet, the coach's verdict and its chance of winning, the agent's turn
        console = ScriptedConsole(["s full_house", "s ones", "s threes", "s fives"], height=height)
        record = tmp_path / f"g{height}.jsonl"
        argv = ["--vs", "exact2", "--coach", "--rules", rules.name, "--seed", "11", "--record", str(record)]
        assert play_main(argv, console) == 0
        screens = [text for text in console.output if "roll 1/3" in text or "roll 1 of 3" in text]
        assert len(screens) == 4 and any("to win:" in text for text in screens)
        rows = [sum(max(1, -(-len(line) // console.width)) for line in text.splitlines()) for text in screens]
        assert max(rows) < height, (height, rows)  # the prompt takes the last line


def test_grades_of_given_chances_name_the_best_action_the_chosen_chance_and_the_loss(small):
    rules, _ = small
    grader = TwoPlayerGrader(rules)
    n = grader.solution.actions.num_actions
    chances = np.full((3, n), -np.inf)
    chances[0, [3, 5, n - 1]] = [0.25, 0.75, 0.75]  # two best actions: the lower is named
    chances[1, [1, n - 2]] = [0.5, 0.125]
    chances[2, n - 1] = 0.0  # the one legal action loses for sure: nothing is lost by taking it
    graded = grader.grade(chances, [3, n - 2, n - 1])
    assert graded.best_action.tolist() == [5, 1, n - 1]
    assert graded.chosen.tolist() == [0.25, 0.125, 0.0]
    assert graded.loss.tolist() == [0.5, 0.375, 0.0]
    with pytest.raises(ValueError, match="^action 4 is not legal there$"):  # the first of the two illegal ones
        grader.grade(chances, [4, 2, n - 1])
    empty = grader.grade(np.zeros((0, n)), [])
    assert empty.best_action.shape == empty.loss.shape == empty.chosen.shape == (0,)


def test_losses_of_actions_taken_are_the_drop_from_the_best_chance(small):
    rules, solution = small
    grader = TwoPlayerGrader(rules)
    every, n = rules.all_open, grader.solution.actions.num_actions
    hand = rules.hand([1, 1, 3, 5, 6])
    q = solution.action_values(every, every, 0, [1, 1, 3, 5, 6], 0)
    legal = np.flatnonzero(np.isfinite(q))
    assert len(legal) == rules.num_rows and q[legal].max() > q[legal].min()
    losses = grader.losses(
        [every] * len(legal), [every] * len(legal), [0] * len(legal), [hand] * len(legal), [0] * len(legal), legal
    )
    np.testing.assert_allclose(losses, q.max() - q[legal], atol=1e-12)
    assert losses.min() == 0.0
    with pytest.raises(ValueError, match="^action 3 is not legal there$"):  # no roll left: re-rolls 3 and 5 are illegal
        grader.losses([every] * 3, [every] * 3, [0] * 3, [hand] * 3, [0] * 3, [n - 1, 3, 5])


def test_a_record_whose_sheet_does_not_follow_from_the_decisions_before_it_is_refused(small):
    rules, _ = small
    match, _ = agents_game(rules, 5)
    grader = TwoPlayerGrader(rules)
    # seat 0's first decision after it has filled a row
    first_row = next(i for i, d in enumerate(match.decisions) if d["seat"] == 0 and d["points"] is not None)
    later = next(i for i, d in enumerate(match.decisions) if i > first_row and d["seat"] == 0)
    total = match.decisions[later]["total"]
    for change in ({"total": total + 1}, {"total": total - 1}, {"open": list(rules.category_names)}):
        decisions = [dict(d) for d in match.decisions]
        decisions[later].update(change)  # only the total (above or below), or only the open rows, off
        with pytest.raises(ValueError, match=f"seat 0: turn {decisions[later]['turn']} comes without the decisions before it"):
            grader.grade_decisions(decisions)
    decisions = [dict(d) for d in match.decisions]
    decisions[1]["seat"] = 2
    with pytest.raises(ValueError, match="seat 2 at a table of two"):
        grader.grade_decisions(decisions)


def test_no_decisions_grade_to_empty_grades(small):
    rules, _ = small
    graded = TwoPlayerGrader(rules).grade_decisions([])
    assert graded.chances.shape == (0, ActionLayout(rules).num_actions) and graded.loss.shape == (0,)


def test_the_grader_grades_yacht_unless_told_otherwise(no_solution):
    from agents.two_player import SolutionNotComputed

    with pytest.raises(SolutionNotComputed, match="`python -m agents.two_player --rules yacht` computes it"):
        TwoPlayerGrader()
