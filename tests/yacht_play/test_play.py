"""Terminal play, game records and grading against the optimum.

The terminal tests drive ``python -m yacht_play`` through a real pseudo-terminal with pexpect
and check what was played against ``YachtEnv`` and the DP, computed here independently.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pexpect
import pytest
from gymnasium.utils import seeding

from agents.learned.model_files import export_model
from agents.registry import make_policy
from agents.solvers.optimal import q_values, solve
from yacht_env import CATEGORIES, YACHT, YachtEnv
from yacht_env.game import draw_table_dice
from yacht_play.coach import Grader, report_players
from yacht_play.commands import CommandError, parse_command
from yacht_play.match import Match, Player, dice_stream, play_agent_games, write_agent_games
from yacht_play.records import RecordError, RecordWriter, read_records
from yacht_play.terminal import HELP, ScriptedConsole, coach_text
from yacht_play.terminal import main as play_main

PROMPT = r"turn (\d+) roll (\d)> "
FIRST_SCORE = 32
ALL_OPEN = (1 << 12) - 1


def turn_commands(turn: int) -> list[str]:
    """A fixed, always-legal plan: no re-roll, one, or two, then score row ``turn``."""
    return [[], ["r 1 2"], ["r 3 4 5", "r1"]][turn % 3] + [f"s {turn}"]


PLAN = [command for turn in range(1, 13) for command in turn_commands(turn)]


def spawn(tmp_path, *args, timeout=30):
    """The game in a pseudo-terminal. pexpect regexes are DOTALL: ``.`` matches newlines too."""
    # this checkout's code, whatever is installed
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TERM="dumb", PYTHONUNBUFFERED="1", PYTHONPATH=root)
    # Ctrl-C as a person's terminal delivers it, even when the tests run where SIGINT is ignored (a background job)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "yacht_play", *args],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(60, 200),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    return child


def expect_prompt(child, turn=None, roll=None):
    child.expect(PROMPT)
    if turn is not None:
        assert (int(child.match.group(1)), int(child.match.group(2))) == (turn, roll)


def send_plan(child, commands):
    for command in commands:
        expect_prompt(child)
        child.sendline(command)


def dice_on_screen(text: str) -> list[int]:
    return [int(d) for d in re.findall(r"\d:\[(\d)\]", text.split("Dice")[-1])[:5]]


def reference_game(seed: int, commands: list[str], tmp_path, *extra) -> list[dict]:
    """The decisions of an uninterrupted game played without a terminal."""
    path = tmp_path / f"reference-{seed}.jsonl"
    assert play_main(["--seed", str(seed), "--record", str(path), *extra], ScriptedConsole(commands)) == 0
    return read_records(path).games[-1].decisions


def played(decisions):
    keys = ("seat", "turn", "roll", "dice", "rolls_left", "open", "action", "points", "total")
    return [{key: d[key] for key in keys} for d in decisions]


def final_sheet(decisions, seat=0):
    return {
        CATEGORIES[d["action"] - FIRST_SCORE]: d["points"] for d in decisions if d["seat"] == seat and d["points"] is not None
    }


def env_total(seed: int, policy, faces=None) -> int:
    """The total ``policy`` scores in ``Yacht-v0`` reset with ``seed`` (or on the given dice)."""
    env = YachtEnv(observation_encoding=policy.encoding.name)
    obs, info = env.reset(seed=seed, options=None if faces is None else {"faces": faces})
    while True:
        obs, _, terminated, _, info = env.step(policy.act(obs, info["action_mask"]))
        if terminated:
            return env.total


# -- through a pseudo-terminal -----------------------------------------------------------------


def test_solitaire_game_in_a_terminal_survives_bad_input(tmp_path):
    record = tmp_path / "ana.jsonl"
    child = spawn(tmp_path, "--seed", "11", "--record", str(record), "--name", "ana")
    expect_prompt(child, 1, 1)
    dice = dice_on_screen(child.before)
    assert len(dice) == 5 and "Little Straight" in child.before and "now" in child.before
    missing = next(face for face in range(1, 7) if face not in dice)
    bad_inputs = [
        ("xyz", "unknown command 'xyz'"),
        ("k 7", "7 is not a die face"),
        (f"k {missing}", "cannot keep"),
        ("r 9", "no die at position 9"),
        ("s 13", "there is no row 13"),
        ("s nonsense", "no row called"),
        ("", "k DICE keeps dice"),
        ("?", "Commands:"),
    ]
    for text, message in bad_inputs:
        child.sendline(text)
        child.expect_exact(message)
        expect_prompt(child, 1, 1)
    child.sendeof()  # Ctrl-D: a message, the same prompt, nothing lost
    child.expect_exact("Ctrl-D does not end the game")
    expect_prompt(child, 1, 1)
    child.sendline(f"k {dice[0]}")  # keep the first die: re-roll the other four
    expect_prompt(child, 1, 2)
    child.sendline("s ones")
    expect_prompt(child, 2, 1)
    child.sendline("s 1")
    child.expect_exact("Ones is already filled; open rows: 2 3 4 5 6 7 8 9 10 11 12")
    commands = [command for turn in range(2, 13) for command in turn_commands(turn)]
    child.sendline(commands[0])
    send_plan(child, commands[1:])
    child.expect(r"Game over")
    child.expect(r"Grade: expected points lost")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    games = read_records(record).games
    assert len(games) == 1 and games[0].finished
    decisions = games[0].decisions
    reference = reference_game(11, [f"k {dice[0]}", "s ones", *commands], tmp_path, "--name", "ana")
    assert played(decisions) == played(reference)  # bad input recorded nothing
    assert games[0].end["totals"] == [decisions[-1]["total"]]
    assert all(d["player"] == "ana" and d["kind"] == "human" and d["seconds"] >= 0 for d in decisions)
    assert all(d["dice"] == sorted(d["dice"]) for d in decisions)


def test_interrupted_game_resumes_to_the_same_sheet(tmp_path):
    record = tmp_path / "interrupted.jsonl"
    child = spawn(tmp_path, "--seed", "21", "--record", str(record))
    send_plan(child, PLAN[:7])
    expect_prompt(child)
    child.sendintr()  # Ctrl-C at the prompt
    child.expect_exact("Continue it with: yacht play --resume")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert len(read_records(record).games[0].decisions) == 7
    with open(record, "ab") as handle:  # and a crash tore the line being written
        handle.write(b'{"schema":1,"type":"decision","game_id":"')
    assert read_records(record).torn

    child = spawn(tmp_path, "--resume", str(record))
    child.expect_exact("7 decisions replayed")
    send_plan(child, PLAN[7:])
    child.expect("Game over")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    records = read_records(record)
    assert not records.torn and len(records.games) == 1 and records.games[0].finished
    resumed = records.games[0].decisions
    reference = reference_game(21, PLAN, tmp_path)
    assert played(resumed) == played(reference)
    assert final_sheet(resumed) == final_sheet(reference) and len(final_sheet(resumed)) == 12


def test_duplicate_game_with_coach_compares_turn_by_turn(tmp_path):
    record = tmp_path / "duplicate.jsonl"
    child = spawn(tmp_path, "--seed", "5", "--duplicate", "optimal", "--coach", "--record", str(record))
    expect_prompt(child, 1, 1)
    first_dice = dice_on_screen(child.before)
    assert "optimal" not in child.before.split("Dice")[-1]  # the agent's column stays hidden until the end
    child.sendline(PLAN[0])
    child.expect(r"coach: [^\n]*\n\s+options: [^\n]*\n")
    coach = child.match.group(0)
    q = q_values(first_dice, 2, list(CATEGORIES))
    assert f"{q.max():.2f}" in coach  # the best choice's expected final score (total 0 so far)
    send_plan(child, PLAN[1:])
    child.expect_exact("optimal now plays the same dice")
    child.expect_exact("Turn by turn, on the same dice:")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    compared = re.findall(r"^\s*(\d+)  .+ (\d+)\s+\d+\.\d\d  .+ (\d+)\s+\d+\.\d\d\s*$", child.before, re.MULTILINE)
    assert [int(turn) for turn, *_ in compared] == list(range(1, 13))  # one line per turn, both players

    game = read_records(record).games[0]
    you, agent = game.players
    assert game.header["mode"] == "duplicate" and you["seed"] == agent["seed"] == 5
    assert you["seed"] == agent["seed"] == 5 and "faces" not in you  # the dice are derived, never written ahead
    agent_decisions = [d for d in game.decisions if d["seat"] == 1]
    assert game.decisions[: len(game.decisions) - len(agent_decisions)] == [d for d in game.decisions if d["seat"] == 0]
    assert agent_decisions[-1]["total"] == env_total(5, make_policy("optimal"))  # game 5 of the evaluation harness
    graded = report_players([game], Grader())
    assert graded[1].name == "optimal" and graded[1].loss_per_game == 0.0


def test_a_person_s_decision_records_the_seconds_from_its_prompt_to_its_answer(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import yacht_play.terminal as terminal

    clock = [1000.0]
    monkeypatch.setattr(terminal, "time", SimpleNamespace(monotonic=lambda: clock[0]))  # the terminal's clock only

    class ThinkingConsole(ScriptedConsole):
        def ask(self, prompt):
            clock[0] += 2.5  # the person thinks for 2.5 s before each answer
            return super().ask(prompt)

    record = tmp_path / "t.jsonl"
    assert play_main(["--seed", "3", "--record", str(record)], ThinkingConsole(["r all", "s 12", "r all", "q"])) == 0
    decisions = read_records(record).games[0].decisions
    assert len(decisions) == 3 and [d["seconds"] for d in decisions] == [2.5, 2.5, 2.5]


@pytest.mark.parametrize(("name", "label"), [("Alexandria", "Alexandria"), ("Maximiliano", "Maximilia~")])
def test_a_seat_s_column_on_the_sheet_is_its_name_cut_to_ten_characters(tmp_path, name, label):
    console = ScriptedConsole(["q"])
    assert play_main(["--seed", "2", "--name", name, "--vs", "greedy", "--record", str(tmp_path / "t.jsonl")], console) == 0
    head = next(line for line in console.text.splitlines() if line.lstrip().startswith("#  row"))
    assert head.split() == ["#", "row", label, "now", "greedy"]


def test_a_duplicate_game_s_end_screen_gives_each_turn_s_row_total_and_loss_from_the_record(tmp_path):
    from yacht_play.commands import decision_label

    console = ScriptedConsole(PLAN)
    assert play_main(["--seed", "5", "--duplicate", "optimal", "--record", str(tmp_path / "d.jsonl")], console) == 0
    intro = "Yacht, duplicate: you and optimal play the same dice; optimal plays after you, unseen. Seed 5. Record: "
    intro += str(tmp_path / "d.jsonl")
    assert console.output[0].splitlines()[0] == intro
    assert console.output.count("optimal now plays the same dice ...") == 1  # once, as it starts, after the person's game
    assert console.output.index("optimal now plays the same dice ...") > max(
        i for i, shown in enumerate(console.output) if shown.startswith("turn 12 roll")
    )
    game = read_records(tmp_path / "d.jsonl").games[0]
    losses = Grader().grade(game.decisions).loss
    shown = console.text.split("Turn by turn, on the same dice:\n")[1].split("\n\n")[0].splitlines()
    assert shown[0] == "turn  you                    total  loss  optimal                total  loss"
    expected = []
    for turn in range(1, 13):
        line = f"{turn:>4}"
        for seat in (0, 1):
            mine = [i for i, d in enumerate(game.decisions) if d["seat"] == seat and d["turn"] == turn]
            scored = game.decisions[mine[-1]]  # a turn ends in a row scored
            row = decision_label(scored, YACHT).removeprefix("score ")
            line += f"  {row:<22} {scored['total']:>5} {sum(losses[i] for i in mine):>5.2f}"
        expected.append(line)
    assert shown[1:] == expected
    assert expected[-1].endswith(f"{game.end['totals'][1]:>5}  0.00")  # optimal's final total, and it loses nothing
    screen = console.text.splitlines()
    for seat, name in enumerate(("you", "optimal")):  # the grade: each seat's own decisions, and its worst
        rows = [i for i, d in enumerate(game.decisions) if d["seat"] == seat]
        lost = losses[rows]
        line = f"  {name:<7}  {len(rows):>3} decisions  {lost.mean():.3f} per decision  {lost.sum():6.2f} in all"
        if seat == 0:
            worst = game.decisions[rows[int(lost.argmax())]]
            line += f"  | worst: turn {worst['turn']} roll {worst['roll']}, {decision_label(worst, YACHT)} lost {lost.max():.2f}"
        assert line in screen and (lost.max() > 0) == (seat == 0)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A MaskablePPO model trained for a few hundred steps: a real ppo:PATH agent, however weak."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        "MlpPolicy", YachtEnv(), n_steps=128, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [16]}, device="cpu"
    )
    model.learn(256)
    path = tmp_path_factory.mktemp("model") / "tiny.safetensors"
    export_model(model, path)
    return path


def test_table_game_against_agents_quit_and_resume(tmp_path, tiny_model):
    record = tmp_path / "table.jsonl"
    child = spawn(tmp_path, "--seed", "40", "--vs", "greedy", "--vs", f"ppo:{tiny_model}", "--record", str(record), timeout=60)
    first = PLAN[:5]  # turns 1 and 2
    send_plan(child, first)
    expect_prompt(child, 3, 1)
    screen = child.before.split("turn 3 of 12")[-1]
    assert re.search(r"row\s+you\s+now\s+greedy\s+ppo", screen)  # every seat's column on the sheet
    assert re.search(r"greedy, turn 2: rolled [1-6 ]+\|[^\n]*\| score [^\n]*total \d+\r\nppo, turn 2: rolled", screen)
    child.sendline("q")
    child.expect_exact("Continue it with: yacht play --resume")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    child = spawn(tmp_path, "--resume", str(record), timeout=60)  # a record never makes the program load a model
    child.expect_exact("never makes yacht play load a model; name the agents again with --vs")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2

    child = spawn(tmp_path, "--resume", str(record), "--vs", "greedy", "--vs", f"ppo:{tiny_model}", timeout=60)
    send_plan(child, PLAN[5:])
    child.expect(r"(\w+ wins with \d+|share the win with \d+)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    game = read_records(record).games[0]
    seats = [d["seat"] for d in game.decisions if d["points"] is not None]
    assert seats == [0, 1, 2] * 12  # whole turns in rotation
    assert [p["seed"] for p in game.players] == [40, 40, 40]
    dealt = draw_table_dice(seeding.np_random(40)[0], YACHT, 3)  # as every multi-player game deals seat s
    for seat in range(3):  # each seat's first roll is the one dealt to it
        first = next(d for d in game.decisions if d["seat"] == seat)
        assert first["dice"] == sorted(dealt[seat, 0, 0].tolist())
    totals = game.end["totals"]
    assert totals[1] == env_total(None, make_policy("greedy"), dealt[1])
    assert totals[2] == env_total(None, make_policy(f"ppo:{tiny_model}"), dealt[2])
    assert game.end["winners"] == [p["name"] for p, t in zip(game.players, totals) if t == max(totals)]
    assert played([d for d in game.decisions if d["seat"] == 0]) == played(reference_game(40, PLAN, tmp_path))


# -- resume refuses what it cannot continue ----------------------------------------------------


def test_resume_refuses_finished_and_corrupt_records(tmp_path, capsys):
    finished = tmp_path / "finished.jsonl"
    assert play_main(["--seed", "3", "--record", str(finished)], ScriptedConsole(PLAN)) == 0
    assert play_main(["--resume", str(finished)], ScriptedConsole([])) == 2
    error = capsys.readouterr().err
    assert "is finished" in error and error.count("\n") == 1

    unfinished = tmp_path / "unfinished.jsonl"
    assert play_main(["--seed", "3", "--record", str(unfinished)], ScriptedConsole(PLAN[:6] + ["q"])) == 0
    lines = unfinished.read_text().splitlines()
    decision = json.loads(lines[3])
    decision["dice"] = [6, 6, 6, 6, 6]
    other_dice = tmp_path / "other-dice.jsonl"
    other_dice.write_text("\n".join(lines[:3] + [json.dumps(decision)] + lines[4:]) + "\n")
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:]) + "\n")
    for path, message in (
        (other_dice, "does not fit the game"),
        (garbled, "garbled.jsonl:3: not a JSON record"),
        (tmp_path / "missing.jsonl", "cannot read"),
    ):
        capsys.readouterr()
        assert play_main(["--resume", str(path)], ScriptedConsole([])) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1

    # every decision saved but not the end line: resuming just closes the game
    no_end = tmp_path / "no-end.jsonl"
    no_end.write_text("".join(finished.read_text().splitlines(keepends=True)[:-1]))
    console = ScriptedConsole([])
    assert play_main(["--resume", str(no_end)], console) == 0
    assert "Game over" in console.text and read_records(no_end).games[0].finished

    # a new game may not bury an unfinished one in the same file
    assert play_main(["--seed", "4", "--record", str(unfinished)], ScriptedConsole([])) == 2
    assert "unfinished game" in capsys.readouterr().err


def test_in_a_terminal_ctrl_d_is_answered_with_a_hint_until_the_fourth_in_a_row_ends_the_game(tmp_path):
    hint = "Ctrl-D does not end the game: type q to quit (the game stays saved), ? for help"
    console = ScriptedConsole(["s 1", None, None, None, "?", None, None, None, None, "s 3"])  # None: Ctrl-D
    console.interactive = True
    assert play_main(["--seed", "3", "--record", str(tmp_path / "d.jsonl")], console) == 0
    assert console.output.count(hint) == 3 + 3  # the count starts again after anything typed (here help)
    assert console.output.count(HELP) == 1
    assert len(read_records(tmp_path / "d.jsonl").games[0].decisions) == 1 and console.lines == ["s 3"]
    closed = ScriptedConsole(["s 1", None, "s 2"])  # input that is not a terminal: its end is the end
    assert play_main(["--seed", "3", "--record", str(tmp_path / "e.jsonl")], closed) == 0
    assert hint not in closed.output and closed.lines == ["s 2"]


def test_a_game_is_titled_by_its_family_and_by_its_rules_where_they_are_a_variant():
    from yacht_env.rules import RULE_SETS, RuleSet
    from yacht_play.terminal import game_title

    titles = {name: game_title(rules) for name, rules in RULE_SETS.items()}
    assert titles["yacht"] == "Yacht" and titles["yahtzee"] == "Yahtzee" and titles["yatzy"] == "Yatzy"
    assert titles["yacht_exercism"] == "Yacht (yacht_exercism rules)"
    assert titles["yahtzee_forced_joker"] == "Yahtzee (yahtzee_forced_joker rules)"
    assert game_title(RuleSet("house", YACHT.categories)) == "Yacht (house rules)"  # a family of its own: Yacht's
    assert game_title(RuleSet("yatzy_at_home", YACHT.categories)) == "Yatzy (yatzy_at_home rules)"


def test_what_resume_and_record_cannot_continue_is_named_in_one_line(tmp_path, capsys):
    finished = tmp_path / "finished.jsonl"
    assert play_main(["--seed", "3", "--vs", "greedy", "--record", str(finished)], ScriptedConsole(PLAN)) == 0
    totals = read_records(finished).games[0].end["totals"]
    table = tmp_path / "table.jsonl"
    two_agents = ["--vs", "greedy", "--vs", "random"]
    assert play_main(["--seed", "3", *two_agents, "--record", str(table)], ScriptedConsole(PLAN[:2] + ["q"])) == 0
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    capsys.readouterr()
    for argv, error in [
        (
            ["--resume", str(finished)],
            f"the game in {finished} is finished (you {totals[0]}, greedy {totals[1]}): nothing to resume",
        ),
        (["--resume", str(empty)], f"{empty} holds no game to resume"),
        (["--resume", str(tmp_path)], f"--resume {str(tmp_path)!r} is not a regular file: give the game's .jsonl record"),
        *(
            (
                ["--resume", str(table), *vs],
                f"the game in {table} has 2 agent seat(s); --vs names {len(vs) // 2}: give one --vs per agent, in seat order",
            )
            for vs in (["--vs", "greedy"], two_agents + ["--vs", "optimal"])
        ),
        (
            ["--seed", "4", "--record", str(table)],
            f"{table} ends with an unfinished game: continue it with --resume {table}, or record elsewhere",
        ),
    ]:
        before = {path: path.read_bytes() for path in (finished, table, empty)}
        assert play_main(argv, ScriptedConsole(PLAN)) == 2
        assert capsys.readouterr().err == f"yacht play: error: {error}\n"
        assert {path: path.read_bytes() for path in before} == before  # no record touched


# -- records -----------------------------------------------------------------------------------


def test_agent_games_round_trip_and_match_the_evaluation_games(tmp_path):
    path = tmp_path / "agents.jsonl"
    greedy = write_agent_games(path, "greedy", games=3, seed=10)
    optimal = write_agent_games(path, make_policy("optimal"), games=2, seed=10)
    records = read_records(path)
    assert not records.torn
    assert [g.lines() for g in records.games] == [g.lines() for g in greedy + optimal]
    assert [g.header["seed"] for g in records.games] == [10, 11, 12, 10, 11]
    for game in records.games[3:]:
        assert game.end["totals"] == [env_total(game.header["seed"], make_policy("optimal"))]
    decision = records.games[0].decisions[0]
    assert {
        "schema",
        "game_id",
        "seed",
        "player",
        "kind",
        "turn",
        "roll",
        "dice",
        "rolls_left",
        "open",
        "action",
        "action_text",
        "points",
        "total",
        "seconds",
        "time",
    } <= set(decision)


def test_torn_last_line_is_dropped_and_cut_before_the_next_write(tmp_path):
    path = tmp_path / "torn.jsonl"
    games = write_agent_games(path, "greedy", games=2, seed=0)
    intact = path.read_bytes()
    path.write_bytes(intact + b'{"schema":1,"type":"decision","game_id":"x","se')
    records = read_records(path)
    assert records.torn and [g.lines() for g in records.games] == [g.lines() for g in games]
    with RecordWriter(path) as writer:
        writer.write(games[0].header | {"game_id": "another"})
    assert path.read_bytes().startswith(intact) and not read_records(path).torn
    assert [g.game_id for g in read_records(path).games][-1] == "another"

    path.write_bytes(intact.replace(b"\n", b"\nnot json\n", 1))  # damage in the middle is corruption, not a tear
    with pytest.raises(RecordError, match=r"torn.jsonl:2: not a JSON record"):
        read_records(path)
    path.write_bytes(intact.replace(b'"schema":2', b'"schema":9', 1))
    with pytest.raises(RecordError, match="newer"):
        read_records(path)


# -- grading -----------------------------------------------------------------------------------


def test_optimal_games_lose_exactly_nothing(tmp_path):
    games = write_agent_games(tmp_path / "optimal.jsonl", "optimal", games=4, seed=100)
    graded = Grader().grade([d for g in games for d in g.decisions])
    assert (graded.loss == 0.0).all()
    (report,) = report_players(games, Grader())
    assert report.loss_per_decision == 0.0 and report.loss_per_game == 0.0 and report.worst == []
    assert report.finished_games == 4 and report.row_decisions == 48


def test_a_blunder_grades_to_its_exact_loss(tmp_path):
    solution = solve()
    match = Match.new([Player("bea")], seed=3)
    blunder_at, blunder = 4, None
    while not match.finished:
        seat = match.current
        action = int(solution.best_actions_batch(np.array([seat.dice]), seat.rolls_left, seat.open_bits)[0])
        if len(match.decisions) == blunder_at:
            q = q_values(list(seat.dice), seat.rolls_left, seat.open_names)  # the scalar entry point
            legal = np.flatnonzero(np.isfinite(q))
            action = int(legal[np.argmin(q[legal])])  # the worst legal choice
            blunder = (seat.turn, seat.roll, float(q.max() - q[action]), int(np.argmax(q)))
        match.play(action)
    (report,) = report_players([match.game_record()], Grader())
    turn, roll, loss, best = blunder
    assert loss > 1
    assert report.loss_per_game == loss
    assert report.loss_per_decision == loss / report.decisions
    assert [(w["turn"], w["roll"], w["loss"], w["best_action"]) for w in report.worst] == [(turn, roll, loss, best)]


def test_analyze_command_writes_table_json_and_plot(tmp_path, capsys):
    from yacht_play.cli import main as yacht

    record = tmp_path / "person.jsonl"
    assert play_main(["--seed", "8", "--record", str(record), "--name", "cy"], ScriptedConsole(PLAN)) == 0
    capsys.readouterr()
    out_json, out_png = tmp_path / "grades.json", tmp_path / "grades.png"
    assert (
        yacht(
            ["analyze", str(record), "--agent", "optimal", "--agent", "greedy", "--json", str(out_json), "--plot", str(out_png)]
        )
        == 0
    )
    screen = capsys.readouterr().out
    assert "loss per decision" in screen and "cy" in screen and "greedy (replay)" in screen and "worst" in screen
    report = json.loads(out_json.read_text())
    players = {p["label"]: p for p in report["players"]}
    assert set(players) == {"cy", "optimal (replay)", "greedy (replay)"}
    assert players["optimal (replay)"]["loss_per_game"] == 0.0
    assert players["cy"]["loss_per_game"] > players["greedy (replay)"]["loss_per_game"] > 0
    assert len(players["cy"]["by_turn"]) == 12 and players["cy"]["decisions"] == len(PLAN)
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert yacht(["analyze", str(tmp_path / "nothing.jsonl")]) == 2


# -- pieces ------------------------------------------------------------------------------------


def test_commands_name_dice_positions_and_rows():
    dice = (2, 2, 3, 5, 6)

    def action(text, rolls_left=2, open_bits=ALL_OPEN):
        return parse_command(text, dice, rolls_left, open_bits, YACHT).action

    assert action("k 2 2") == action("keep 22") == action("k22") == action("r 3 4 5") == action("reroll 345") == 0b11100
    assert action("k 2 5") == action("r 2,3,5") == 0b10110
    assert action("k none") == action("r all") == 31
    assert action("s full_house") == action("s 9") == action("score Full House") == action("s fh") == action("s full") == 40
    assert action("s 12") == action("s yacht") == 43
    for text, rolls_left, open_bits, message in [
        ("k 2 2 2", 2, ALL_OPEN, "cannot keep 2 2 2"),
        ("k 2 2 3 5 6", 2, ALL_OPEN, "not a re-roll"),
        ("r 0", 2, ALL_OPEN, "no die at position 0"),
        ("r 1", 0, ALL_OPEN, "no re-rolls left"),
        ("s f", 2, ALL_OPEN, "could be fours, fives, four_of_a_kind, full_house"),
        ("s 3", 2, ALL_OPEN & ~0b100, "Threes is already filled"),
        ("roll", 2, ALL_OPEN, "r needs the positions"),
        ("jump", 2, ALL_OPEN, "unknown command 'jump'"),
    ]:
        with pytest.raises(CommandError, match=message):
            action(text, rolls_left, open_bits)
    assert parse_command("?", dice, 2, ALL_OPEN, YACHT).kind == "help"
    assert parse_command("Q", dice, 2, ALL_OPEN, YACHT).kind == "quit"


@pytest.mark.parametrize("text", ["s ٣", "s ²", "k ٢", "k²", "r ³", "r1²", "s 𝟗", "k 2 ٢"])
def test_a_command_with_another_script_s_digits_is_refused_naming_it(text):
    dice = (2, 2, 3, 5, 6)
    with pytest.raises(CommandError) as error:  # int() would read ٣ as 3, and str.isdigit takes "²" that int refuses
        parse_command(text, dice, 2, ALL_OPEN, YACHT)
    assert "\n" not in str(error.value) and text.split()[-1][-1] in str(error.value)


def test_coach_names_the_best_choice_and_the_loss():
    dice = [1, 1, 1, 1, 4]
    q = q_values(dice, 0, list(CATEGORIES))
    best = int(np.argmax(q))
    assert coach_text(q, best, dice, 0, YACHT).startswith("coach: score ")
    text = coach_text(q, FIRST_SCORE + 11, dice, 10, YACHT)  # Yacht for 0
    assert f"you lost {q[best] - q[FIRST_SCORE + 11]:.2f}" in text and f"{10 + q[best]:.2f}" in text


def test_a_refused_action_changes_nothing_and_records_nothing(tmp_path):
    from yacht_env.actions import IllegalActionError

    path = tmp_path / "refused.jsonl"
    match = Match.new([Player("dee")], seed=2)
    with RecordWriter(path) as writer:
        match.record_to(writer)
        match.play(FIRST_SCORE)  # ones
        before = (match.current.dice, match.current.rolls_left, match.current.open_bits)
        for action in (0, FIRST_SCORE, 44, 2.5):
            with pytest.raises(IllegalActionError if action in (0, FIRST_SCORE) else ValueError):
                match.play(action)
        assert (match.current.dice, match.current.rolls_left, match.current.open_bits) == before
    assert [d["action"] for d in read_records(path).games[0].decisions] == [FIRST_SCORE]


def test_agents_replayed_on_the_same_dice_play_the_recorded_streams():
    streams = [(7, dice_stream(7))]
    (game,) = play_agent_games("optimal", streams)
    assert game.players[0]["seed"] == 7
    assert game.end["totals"] == [env_total(7, make_policy("optimal"))]


def test_importing_the_terminal_modules_stays_light():
    code = (
        "import sys, yacht_play.terminal, yacht_play.analyze, yacht_play.cli, yacht_play.records, yacht_play.match;"
        "print(sorted(m for m in ('agents', 'torch', 'matplotlib', 'rich') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_solitaire_coach_shows_the_chance_of_reaching_a_target(tmp_path, capsys):
    from agents.solvers.target import target_probabilities

    console = ScriptedConsole(["s 12", "q"])  # score the first roll in Yacht, then stop
    assert play_main(["--seed", "9", "--coach", "--target", "150", "--record", str(tmp_path / "t.jsonl")], console) == 0
    options = next(line for line in console.output if "options:" in line)
    first = read_records(tmp_path / "t.jsonl").games[0].decisions[0]
    chances = target_probabilities(first["dice"], first["rolls_left"], CATEGORIES, 150)
    q = solve().q_values_batch(YACHT.hand(first["dice"]), first["rolls_left"], ALL_OPEN)[0]
    best = int(np.argmax(q))
    assert f"(>=150 {100 * chances[best]:.0f}%)" in options  # the best option, listed first, with its chance
    for argv in (["--target", "150"], ["--coach", "--target", "150", "--vs", "greedy"]):
        assert play_main(["--seed", "9", "--record", str(tmp_path / "x.jsonl"), *argv], ScriptedConsole([])) == 2
        assert "--target 150 goes with a coached solitaire game" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        play_main(["--coach", "--target", "-5"], ScriptedConsole([]))
    assert "expected a whole number of points, 0 or more, got -5" in capsys.readouterr().err
