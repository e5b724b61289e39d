"""Human play under every rule set: the terminal game, records and grading with bonuses and jokers.

The pseudo-terminal test plays a Yahtzee game (official forced joker) on dealt dice: a schema-1
record keeps its dice stream in its header, so resuming one plays exactly the Yahtzees the test
wants, through the same replay and game as any other. Every command refuses a stream that no seed
deals, so the test's child reads it as written (:data:`DEALT_DICE`, as a server reads its own rows).
Expected sheets are computed here with ``RuleSet.score_on`` (the rules' pure reference scoring), not
with the game being tested.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pexpect
import pytest

from agents.solvers.optimal import q_values
from yacht_env.rules import RULE_SETS, YACHT, YAHTZEE, YAHTZEE_FORCED_JOKER, YATZY, rule_set
from yacht_play.coach import Grader, sheet_states
from yacht_play.commands import CommandError, parse_command
from yacht_play.match import load_games, write_agent_games
from yacht_play.records import RecordError, read_records
from yacht_play.terminal import ScriptedConsole
from yacht_play.terminal import main as play_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMPT = r"turn (\d+) roll (\d)> "


def run_cli(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "yacht_play.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def replay_sheet(rules, decisions):
    """The sheet and total after ``decisions`` (one seat's, from the start), scored by ``RuleSet.score_on``."""
    sheet, total = rules.new_sheet(), 0
    first = rules.dice.num_rerolls
    for decision in decisions:
        if decision["action"] >= first:
            result = rules.score_on(sheet, decision["dice"], decision["action"] - first)
            sheet, total = result.sheet, total + result.reward
            assert decision["points"] == result.reward and decision["total"] == total, decision
    return sheet, total


# -- a Yahtzee game in a real terminal, 80 x 24 -------------------------------------------------


def dealt_faces(first_rolls) -> list:
    """A dice stream (turns x rolls x dice) whose turns start on ``first_rolls``; re-rolls show 1 2 3 4 5."""
    faces = [[list(roll), [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]] for roll in first_rolls]
    return faces + [[[1, 2, 3, 4, 6]] * 3] * (13 - len(faces))


# yacht play in a child that plays a schema-1 header's dice stream as written (the commands refuse one no seed deals)
DEALT_DICE = (
    "import sys; import yacht_play.match as m; real = m.recorded_seat_dice; "
    "m.recorded_seat_dice = lambda header, info, rules, where, as_recorded=False: real(header, info, rules, where, True); "
    "from yacht_play.terminal import main; sys.exit(main(sys.argv[1:]))"
)


def read_dealt_dice(monkeypatch) -> None:
    """Have this process play schema-1 dice streams as written, as :data:`DEALT_DICE` has its child."""
    import yacht_play.match as match_module

    real = match_module.recorded_seat_dice
    monkeypatch.setattr(
        match_module,
        "recorded_seat_dice",
        lambda header, info, rules, where, as_recorded=False: real(header, info, rules, where, True),
    )


def dealt_record(path, rules, first_rolls) -> None:
    """An unfinished schema-1 game record (its header holds the dice stream) with no decision yet."""
    header = {
        "schema": 1,
        "type": "game",
        "game_id": "dealt-yahtzees",
        "mode": "solitaire",
        "rules": rules.name,
        "seed": 7,
        "coach": False,
        "time": "2026-11-30T20:00:00.000+00:00",
        "players": [{"seat": 0, "name": "you", "kind": "human", "policy": None, "seed": 7, "faces": dealt_faces(first_rolls)}],
    }
    path.write_text(json.dumps(header) + "\n")


def test_forced_joker_game_in_an_80x24_terminal_shows_the_bonus_lines_and_refuses_misplaced_yahtzees(tmp_path, monkeypatch):
    rules = YAHTZEE_FORCED_JOKER
    record = tmp_path / "yahtzee.jsonl"
    dealt_record(record, rules, [[6] * 5, [6] * 5, [5] * 5, [4] * 5, [6] * 5, [1, 2, 3, 4, 6]])
    env = dict(os.environ, TERM="dumb", PYTHONUNBUFFERED="1", PYTHONPATH=ROOT)
    child = pexpect.spawn(
        sys.executable,
        ["-c", DEALT_DICE, "--resume", str(record)],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 80),
    )
    child.expect(PROMPT)
    first = child.before
    assert "Yahtzee (yahtzee_forced_joker rules), solitaire" in first
    for line in ("Upper subtotal", "0/63", "Bonus (35)", "Yahtzee bonus (100)"):
        assert line in first
    child.sendline("s yahtzee")  # 50 in the Yahtzee box
    child.expect(PROMPT)
    child.sendline("s chance")  # another Yahtzee of sixes, the sixes box open: it must go there
    child.expect_exact("Chance cannot take this Yahtzee: the forced joker rule sends it to Sixes (6)")
    child.expect(PROMPT)
    assert (child.match.group(1), child.match.group(2)) == ("2", "1")  # refused: nothing played
    for command in ("s 6", "s fives", "s fours"):  # 30, 25, 20 with 100 each; the fours reach 75 >= 63
        child.sendline(command)
        child.expect(PROMPT)
    screen = child.before  # turn 5: sixes again, their box filled: a joker for a lower box only
    assert re.search(r"Large Straight\s+40", screen)  # the now column at joker values
    assert re.search(r"Upper subtotal\s+75/63", screen) and re.search(r"Bonus \(35\)\s+35", screen)
    assert re.search(r"Yahtzee bonus \(100\)\s+300", screen) and re.search(r"Total\s+460", screen)
    child.sendline("s ones")
    child.expect_exact("Ones cannot take this Yahtzee: the forced joker rule sends it to rows 7 8 9 10 11 13\r\n")
    child.expect(PROMPT)
    child.sendline("s ls")  # large straight at its joker value, and the extra-Yahtzee bonus
    child.expect(PROMPT)
    screen = child.before
    assert re.search(r"Yahtzee bonus \(100\)\s+400", screen) and re.search(r"Total\s+600", screen)
    lines = screen.split("\r\n")
    assert len(lines) <= 23 and max(len(line) for line in lines) <= 80  # the screen fits, with its prompt
    assert "Dice 1:[1] 2:[2] 3:[3] 4:[4] 5:[6]" in screen  # the dice stay on screen
    child.sendline("q")
    child.expect_exact("Continue it with: yacht play --resume")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    read_dealt_dice(monkeypatch)
    game = load_games(record).games[0]  # replayed: every decision's points and total must be the replay's
    assert [d["points"] for d in game.decisions] == [50, 130, 125, 155, 140]
    sheet, total = replay_sheet(rules, game.decisions)
    assert total == 600 and sheet.upper_total == 75 and sheet.yahtzee_box == 50


def test_terminal_coach_values_each_decision_on_the_sheet_state(tmp_path):
    rules = YAHTZEE
    path = tmp_path / "coached.jsonl"
    plan = [command for turn in range(1, 14) for command in ([f"s {turn}"] if turn % 2 else ["r 1 2", f"s {turn}"])]
    console = ScriptedConsole(plan)
    console.width = 400  # one line per verdict
    assert play_main(["--rules", "yahtzee", "--seed", "3", "--coach", "--record", str(path)], console) == 0
    decisions = read_records(path).games[0].decisions
    shown = [float(x) for x in re.findall(r"coach: .*?expected final score (\d+\.\d\d)", console.text)]
    assert len(shown) == len(decisions) == 19
    sheet, total = rules.new_sheet(), 0
    for decision, value in zip(decisions, shown):
        q = q_values(
            decision["dice"],
            decision["rolls_left"],
            decision["open"],
            "yahtzee",
            upper_total=sheet.upper_total,
            yahtzee_box=sheet.yahtzee_box,
        )
        assert value == pytest.approx(total + q[decision["action"]], abs=0.006)
        if decision["points"] is not None:
            result = rules.score_on(sheet, decision["dice"], decision["action"] - 32)
            sheet, total = result.sheet, total + result.reward
    assert "Upper subtotal" in console.text and "Yahtzee bonus (100)" in console.text


def test_commands_follow_the_rule_set():
    rules = YAHTZEE_FORCED_JOKER
    all_open = rules.all_open
    yahtzee_filled = all_open & ~(1 << rules.category_index["yahtzee"])
    assert parse_command("s y", (1, 2, 3, 4, 6), 0, all_open, rules).action == 32 + rules.category_index["yahtzee"]
    assert parse_command("s ls", (1, 2, 3, 4, 6), 0, all_open, rules).action == 32 + rules.category_index["large_straight"]
    assert parse_command("s ss", (1, 2, 3, 4, 6), 0, all_open, rules).action == 32 + rules.category_index["small_straight"]
    assert parse_command("s 3k", (1, 2, 3, 4, 6), 0, all_open, rules).action == 32 + rules.category_index["three_of_a_kind"]
    assert parse_command("s 2p", (1, 1, 3, 3, 6), 0, YATZY.all_open, YATZY).action == 32 + YATZY.category_index["two_pairs"]
    assert parse_command("s y", (1, 1, 3, 3, 6), 0, YACHT.all_open, YACHT).action == 32 + YACHT.category_index["yacht"]
    with pytest.raises(CommandError, match="forced joker rule sends it to Twos"):
        parse_command("s chance", (2, 2, 2, 2, 2), 0, yahtzee_filled, rules)
    with pytest.raises(CommandError, match="there is no row 14: rows are numbered 1 to 13"):
        parse_command("s 14", (2, 2, 2, 2, 2), 0, all_open, rules)
    # the free joker lets a Yahtzee go anywhere
    assert parse_command("s chance", (2, 2, 2, 2, 2), 0, yahtzee_filled, YAHTZEE).kind == "action"


# -- records: the rule set is kept, replayed exactly, and must match -------------------------------


@pytest.fixture(scope="module")
def yahtzee_games(tmp_path_factory):
    """The optimum's games 3 and 19 of Yahtzee: upper bonus, extra Yahtzees and jokers (found by search)."""
    path = tmp_path_factory.mktemp("records") / "yahtzee.jsonl"
    write_agent_games(path, "optimal", games=1, seed=3, rules=YAHTZEE)
    write_agent_games(path, "optimal", games=1, seed=19, rules=YAHTZEE)
    return path


def test_yahtzee_records_round_trip_with_every_bonus(yahtzee_games):
    games = load_games(yahtzee_games).games
    assert [g.header["rules"] for g in games] == ["yahtzee", "yahtzee"]
    for game in games:
        sheet, total = replay_sheet(YAHTZEE, game.decisions)
        assert game.end["totals"] == [total]
    first = games[0].decisions
    assert games[0].end["totals"] == [513]  # 35 upper bonus and two extra Yahtzees: 235 points of bonuses
    joker = next(d for d in first if d["turn"] == 9 and d["points"] is not None)
    assert joker["dice"] == [5] * 5 and joker["action_text"] == "score large_straight" and joker["points"] == 140


def test_records_refuse_other_rules_in_one_line(yahtzee_games, tmp_path):
    with pytest.raises(RecordError, match=r"played under the yahtzee rules, not yacht: use --rules yahtzee"):
        load_games(yahtzee_games, rule_set("yacht"))
    lines = yahtzee_games.read_text().splitlines()
    header = json.loads(lines[0])
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join([json.dumps(dict(header, rules="yahtzee_no_joker")), *lines[1:]]) + "\n")
    with pytest.raises(RecordError, match=r"field '(points|total)': the replay gives"):  # no joker: the straight scores 0
        load_games(tampered)
    decision = json.loads(lines[5])
    bumped = tmp_path / "bumped.jsonl"
    bumped.write_text("\n".join([*lines[:5], json.dumps(dict(decision, total=decision["total"] + 100)), *lines[6:]]) + "\n")
    with pytest.raises(RecordError, match=r"bumped.jsonl:6: .*field 'total'"):
        load_games(bumped)
    result = run_cli("analyze", str(yahtzee_games), "--rules", "yatzy")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "yahtzee rules, not yatzy" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("play", "--resume", str(yahtzee_games), "--rules", "yacht")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_grades_use_the_sheet_state(yahtzee_games):
    games = load_games(yahtzee_games).games
    decisions = [d for g in games for d in g.decisions]
    grader = Grader(YAHTZEE)
    assert np.all(grader.grade(decisions).loss == 0)  # the optimum loses nothing, judged on the whole sheet
    upper, full = sheet_states(decisions, YAHTZEE)
    assert upper.max() >= 63 and full.max() == 1
    # judged on the open rows alone, the optimum's own choices would look like mistakes
    blind = grader.q_values(
        np.array([d["dice"] for d in decisions]),
        np.array([d["rolls_left"] for d in decisions]),
        np.array([grader.open_bits(d["open"]) for d in decisions]),
    )
    actions = np.array([d["action"] for d in decisions])
    assert (blind.max(axis=1) - blind[np.arange(len(decisions)), actions] > 1e-9).any()
    with pytest.raises(RecordError, match="comes without the decisions before it"):
        grader.grade(decisions[5:])


def test_analyze_grades_yahtzee_records_with_agents_on_the_same_dice(yahtzee_games, tmp_path):
    result = run_cli("analyze", str(yahtzee_games), "--agent", "greedy", "--json", str(tmp_path / "g.json"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"yahtzee rules:\s+optimal expected score 254\.59", result.stdout)
    document = json.loads((tmp_path / "g.json").read_text())
    optimal, greedy = document["players"]
    totals = [g.end["totals"][0] for g in load_games(yahtzee_games).games]
    assert document["rules"] == "yahtzee" and optimal["loss_per_decision"] == 0 and optimal["scores"] == totals
    assert greedy["source"] == "replay" and greedy["loss_per_decision"] > 0


def test_play_refuses_what_the_rule_set_cannot_do(tmp_path):
    for args, message in [
        (["--rules", "yahtzee", "--coach", "--target", "200"], "--target works for rule sets without bonuses or jokers"),
        (["--rules", "yatzy", "--vs", "win"], "agent 'win' plays rule sets without bonuses or jokers"),
        (
            ["--rules", "yahtzee", "--vs", "ppo:models/ppo.safetensors"],
            "agent 'ppo:models/ppo.safetensors' is a model trained for the yacht rules; this game plays yahtzee",
        ),
        (["--rules", "yahtzeee"], "invalid choice: 'yahtzeee'"),
    ]:
        result = run_cli("play", "--record", str(tmp_path / "refused.jsonl"), *args)
        last = result.stderr.strip().splitlines()[-1]  # argparse prints its usage above its one line
        assert result.returncode == 2 and message in last, (args, result.stderr)
        assert "Traceback" not in result.stderr and (last == result.stderr.strip() or last.startswith("yacht play: error"))
        assert not (tmp_path / "refused.jsonl").exists()


@pytest.mark.parametrize("name", sorted(set(RULE_SETS) - {"yacht"}))
def test_every_rule_set_plays_a_scripted_game(name, tmp_path):
    rules = RULE_SETS[name]
    path = tmp_path / f"{name}.jsonl"
    plan = [f"s {turn}" for turn in range(1, rules.num_turns)] + ["q"]  # quit before the end: no solve for the grade
    console = ScriptedConsole(plan, height=24)
    assert play_main(["--rules", name, "--seed", "5", "--record", str(path)], console) == 0
    game = load_games(path).games[0]
    assert game.header["rules"] == name and len(game.decisions) == rules.num_turns - 1
    _, total = replay_sheet(rules, game.decisions)
    assert game.decisions[-1]["total"] == total
    screens = console.text.split("> ")[1:-1]  # what each prompt shows above it
    # each screen and its prompt fit on 24 lines
    assert len(screens) == rules.num_turns - 1 and all(len(screen.strip("\n").splitlines()) <= 24 for screen in screens)
    assert all("Total" in screen for screen in screens)
