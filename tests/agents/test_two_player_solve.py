"""The layered two-player solve, its cache folder, the messages of a missing solution and the command line
``python -m agents.two_player``, on Yacht's ones and twos only: four layers, 90 values, solved in a blink once
the kernels are compiled.

By hand: layer 1 is player two's last turn, one row open and player one's sheet full. With ``ones`` open the
mover can still score 5 (five ones) and player one has filled both rows, so the stored leads run from -5 (behind
by all it can score: a tie at best) to 0 (level, and nothing left for the other: a tie at worst); with ``twos``
open, from -10 to 0.
"""

from __future__ import annotations

import io
import re
import resource
import sys
import time
import weakref
from types import SimpleNamespace

import numba
import numpy as np
import pytest

import agents.two_player as two_player
import agents.two_player.__main__ as command_line
from agents.solvers import solution_cache
from agents.solvers.array_files import ArrayFileError, checksum_path
from agents.solvers.solution_cache import CacheFolderError
from agents.two_player import SolutionNotComputed, load_two_player, solution_label, solve_two_player
from agents.two_player.__main__ import main, parse_args, sub_game
from agents.two_player.kernel import SCALE
from agents.two_player.layout import PairLayout
from agents.two_player.solve import (
    LayerReport,
    estimate_seconds_left,
    first_missing_layer,
    layer_check,
    layer_path,
    load_layer,
    solution_folder,
    terminal_layer,
    worker_count,
    write_layer,
)
from yacht_env.rules import YACHT

ROWS = "ones,twos"
RULES = sub_game(YACHT, ROWS)
LAYERS = (1, 2, 3, 4)  # two players fill two rows each: a layer per turn
HALF = int(SCALE) // 2  # a tie, 1/2, stored exactly
CLI = ["--rules", "yacht", "--rows", ROWS, "--no-progress"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache folder, and no solution held in memory by an earlier test."""
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())
    return tmp_path


def forget(monkeypatch):
    """Drop the solutions held in memory: the next call reads the cache folder (a new process would)."""
    monkeypatch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())


def files(folder) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def remove_layer(folder, num_open: int) -> None:
    layer_path(folder, num_open).unlink()
    checksum_path(layer_path(folder, num_open)).unlink()


# --- the rows of a smaller game -----------------------------------------------------------------------------------


def test_a_sub_game_keeps_the_named_rows_once_each_in_the_rule_set_s_order_with_its_dice():
    rules = sub_game(YACHT, " sixes, ones,,sixes ")
    assert rules.name == "yacht[ones,sixes]"
    assert rules.categories == (YACHT.categories[0], YACHT.categories[5])
    assert (rules.num_dice, rules.num_faces, rules.rolls_per_turn) == (5, 6, 3)
    with pytest.raises(ValueError, match=rf"^--rows names no row; expected some of {', '.join(YACHT.category_names)}$"):
        sub_game(YACHT, " , ,")
    with pytest.raises(ValueError, match="'sevens'"):
        sub_game(YACHT, "ones,sevens")


# --- labels, folders and refusals -----------------------------------------------------------------------------------


def test_each_solution_has_its_label_naming_the_player_by_number_from_one():
    assert solution_label(None) == "game"
    assert solution_label("optimal") == "br-optimal-p1"
    assert solution_label("greedy", 1) == "br-greedy-p2"
    assert solution_label("optimal", 1, "exact2") == "exact2-optimal-p2"
    assert solution_label("greedy", 0, "exact2") == "exact2-greedy-p1"


def test_a_strategy_or_opponent_or_seat_outside_the_choices_is_refused_naming_it_and_the_choices():
    with pytest.raises(ValueError, match=r"^unknown strategy 'worst'; expected one of best, exact2$"):
        solution_label("optimal", 0, "worst")
    with pytest.raises(ValueError, match=r"^strategy 'exact2' is played against an opponent: name one of optimal, greedy$"):
        solution_label(None, 0, "exact2")
    with pytest.raises(ValueError, match=r"^unknown opponent 'perfect'; expected one of optimal, greedy \(or None"):
        solution_label("perfect")
    for seat in (-1, 2):
        with pytest.raises(ValueError, match=rf"^seat must be 0 \(player one\) or 1 \(player two\), got {seat}$"):
            solve_two_player(RULES, "optimal", seat)


def test_a_solution_lives_in_a_folder_named_by_the_format_the_rules_and_its_label(cache, monkeypatch):
    """The name solutions already on disk carry (the Yacht game took 26 minutes to solve): a new name orphans them."""
    assert solution_folder(RULES, "br-optimal-p2") == cache / f"two-player-v1-{RULES.fingerprint}-br-optimal-p2"
    solve_two_player(RULES, "optimal", 1)
    assert sorted(path.name for path in cache.iterdir()) == [f"two-player-v1-{RULES.fingerprint}-br-optimal-p2"]
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", "")
    assert solution_folder(RULES, "game") is None


# --- the solve: layers, resuming, reports, the folder ---------------------------------------------------------------


def test_the_end_of_the_game_is_a_single_tie():
    np.testing.assert_array_equal(terminal_layer(), np.array([HALF], dtype=np.uint16))
    assert terminal_layer().dtype == np.uint16 and HALF / SCALE == 0.5


def test_the_first_missing_layer_is_where_a_solve_starts_a_damaged_one_counting_as_missing(cache):
    layout = PairLayout(RULES)
    folder = solution_folder(RULES, "game")
    assert first_missing_layer(folder, layout) == 1  # nothing there, not even the folder
    assert first_missing_layer(None, layout) == 1  # the cache off
    solve_two_player(RULES)
    assert first_missing_layer(folder, layout) == layout.num_layers == 5
    remove_layer(folder, 3)
    assert first_missing_layer(folder, layout) == 3
    layer_path(folder, 2).write_bytes(layer_path(folder, 2).read_bytes()[:-2])
    assert first_missing_layer(folder, layout) == 2
    remove_layer(folder, 1)
    assert first_missing_layer(folder, layout) == 1


def test_a_solve_reports_every_layer_in_order_to_its_last_value_and_a_stored_solve_reports_nothing(cache, monkeypatch):
    layout = PairLayout(RULES)
    calls = []
    started = time.perf_counter()
    solution = solve_two_player(RULES, report=lambda *call: calls.append(call))
    elapsed = time.perf_counter() - started
    assert [num_open for num_open, _, _ in calls] == sorted(num_open for num_open, _, _ in calls)
    assert sorted({num_open for num_open, _, _ in calls}) == list(LAYERS)
    for num_open in LAYERS:
        done = [values for n, values, _ in calls if n == num_open]
        assert done == sorted(done) and done[-1] == layout.layers[num_open].num_values
    assert all(0 <= seconds <= elapsed for _, _, seconds in calls)
    assert [len(values) for values in solution.layers] == [layer.num_values for layer in layout.layers]
    forget(monkeypatch)
    calls.clear()
    asked = []
    monkeypatch.setattr(solution_cache, "check_folder", lambda *args: asked.append(args))
    again = solve_two_player(RULES, report=lambda *call: calls.append(call))
    assert calls == [] and asked == []  # read back: nothing solved, no room asked of the disk
    assert again.start_value() == solution.start_value()


def test_a_resumed_solve_writes_the_missing_layers_to_the_same_bytes_asking_room_for_them_only(cache, monkeypatch):
    """The room asked for is two bytes per stored value (uint16) and a 4 KiB page per layer for header and checksum."""
    solve_two_player(RULES)
    folder = solution_folder(RULES, "game")
    straight = files(folder)
    for num_open in (3, 4):
        remove_layer(folder, num_open)
    stale = folder / ".layer-03.npy.x1y2z3.partial"  # what a write killed in layer 3 leaves
    stale.write_bytes(b"\0" * 10)
    forget(monkeypatch)
    asked = []
    real_check = solution_cache.check_folder
    monkeypatch.setattr(solution_cache, "check_folder", lambda *args: (asked.append(args), real_check(*args)))
    solved_layers = []
    solve_two_player(RULES, report=lambda num_open, done, seconds: solved_layers.append(num_open))
    assert sorted(set(solved_layers)) == [3, 4]
    assert files(folder) == straight and not stale.exists()
    layers = PairLayout(RULES).layers
    assert asked == [(folder, sum(2 * layers[n].num_values + 4_096 for n in (3, 4)), "the two-player solution")]
    written = sum(len(straight[name]) for name in straight if name.startswith(("layer-03", "layer-04")))
    assert written <= asked[0][1] < written + 2 * 4_096


def test_with_the_cache_off_the_solve_is_the_stored_one_and_nothing_is_written(cache, tmp_path, monkeypatch):
    stored = solve_two_player(RULES)
    forget(monkeypatch)
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", "")
    before = sorted(tmp_path.rglob("*"))
    in_memory = solve_two_player(RULES)
    assert sorted(tmp_path.rglob("*")) == before
    for mine, theirs in zip(in_memory.layers, stored.layers, strict=True):
        assert np.asarray(mine).tobytes() == np.asarray(theirs).tobytes()
    with pytest.raises(SolutionNotComputed):  # nothing to load from
        load_two_player(RULES, "optimal")


def test_a_layer_that_cannot_be_written_is_said_in_one_line_naming_the_folder_and_the_setting(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    folder = blocker / "cache"
    with pytest.raises(CacheFolderError) as refused:
        write_layer(folder, 1, np.zeros(3, dtype=np.uint16))
    assert re.fullmatch(
        rf"cannot write the two-player solution in {re.escape(str(folder))}: (Not a directory|File exists) "
        r"\(set YACHT_RL_CACHE_DIR to a writable folder with room for it\)",
        str(refused.value),
    )
    assert refused.value.__cause__ is None and refused.value.__suppress_context__


def test_the_solve_runs_on_numba_s_thread_count_or_the_cores_and_on_one_thread_at_least(monkeypatch):
    for threads, expected in ((1, 1), (3, 3), (0, 1)):
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
        assert worker_count() == expected
    monkeypatch.delattr(numba.config, "NUMBA_NUM_THREADS")
    for cores, expected in ((6, 6), (None, 1)):
        monkeypatch.setattr("os.cpu_count", lambda cores=cores: cores)
        assert worker_count() == expected


def test_in_the_last_turns_the_policy_plays_its_own_choices_and_the_responder_plays_to_win(cache):
    """Layer 1 is player two's last turn, layer 2 player one's turn before it. In its last turn a best responder,
    and exact2, play to win as in the game (nothing comes after: the game's decision is the best one); the
    policy plays its own choices, which on the row of a sum are not those of playing to win. So player two's
    exact2 and best response agree up to player one's turn before the last, which the policy plays on the same values.
    """
    rules = sub_game(YACHT, "ones,choice")
    game = solve_two_player(rules).layers
    best = [solve_two_player(rules, "optimal", seat).layers for seat in (0, 1)]
    exact2 = [solve_two_player(rules, "optimal", seat, strategy="exact2").layers for seat in (0, 1)]

    def same(first, second) -> bool:
        return np.asarray(first).tobytes() == np.asarray(second).tobytes()

    assert not same(best[0][1], game[1]) and same(exact2[0][1], best[0][1])
    assert same(best[1][1], game[1]) and same(exact2[1][1], game[1])
    assert same(exact2[1][2], best[1][2]) and not same(best[1][2], game[2])


def test_exact2_on_a_fresh_cache_solves_and_reports_the_game_s_layers_first(cache):
    sizes = [layer.num_values for layer in PairLayout(RULES).layers]
    finished = []
    solve_two_player(
        RULES, "optimal", 0, report=lambda n, done, _: finished.append(n) if done == sizes[n] else None, strategy="exact2"
    )
    assert finished == [*LAYERS, *LAYERS]
    assert load_two_player(RULES).label == "game"


# --- the range check of a stored layer -------------------------------------------------------------------------------


@pytest.fixture
def first_layer(cache):
    """Player two's last turn as solved and stored: the layout, the layer, its file's values and a loader of forgeries."""
    solve_two_player(RULES)
    folder, layout = solution_folder(RULES, "game"), PairLayout(RULES)
    layer = layout.layers[1]
    values = np.load(layer_path(folder, 1))

    def load_with(position: int, value: int):
        forged = values.copy()
        forged[position] = value
        layer_path(folder, 1).unlink()
        checksum_path(layer_path(folder, 1)).unlink(missing_ok=True)  # an old file, without checksum: ranges only
        np.save(layer_path(folder, 1), forged)
        return load_layer(folder, layout, layer)

    return layout, layer, values, load_with


def position(layout, layer, mover_row: str, lead: int) -> int:
    pair = layout.pair_index(1 << RULES.category_index[mover_row], 0)
    return int(layer.offset[pair] + lead - layer.lo[pair])


def test_the_stored_leads_of_player_two_s_last_turn_as_counted_by_hand(first_layer):
    layout, layer, values, _ = first_layer
    for row, most in (("ones", 5), ("twos", 10)):
        pair = layout.pair_index(1 << RULES.category_index[row], 0)
        assert (layer.lo[pair], layer.width[pair]) == (-most, most + 1)
    assert values[position(layout, layer, "ones", -5)] < HALF < values[position(layout, layer, "ones", 0)]


@pytest.mark.parametrize("row, lead, side", [("ones", -5, +1), ("twos", -10, +1), ("ones", 0, -1), ("twos", 0, -1)])
def test_a_settled_end_may_hold_a_tie_but_nothing_past_it(first_layer, row, lead, side):
    """Behind by all it can still score (``side`` +1) the mover wins nothing, at best ties; level with nothing left
    to the other (``side`` -1) it loses nothing, at worst ties: exactly 1/2 is a chance such a state can have."""
    layout, layer, _, load_with = first_layer
    at = position(layout, layer, row, lead)
    assert load_with(at, HALF)[at] == HALF
    with pytest.raises(ArrayFileError, match="holds chances on the wrong side of 1/2 where the game is settled"):
        load_with(at, HALF + side)


def test_a_stored_chance_may_be_one_but_not_above(first_layer):
    layout, layer, _, load_with = first_layer
    at = position(layout, layer, "twos", -3)
    loaded = load_with(at, int(SCALE))
    assert loaded[at] == SCALE
    assert isinstance(loaded, np.memmap) and not loaded.flags.writeable  # read-only, and not copied into memory
    with pytest.raises(ArrayFileError, match=rf"holds {int(SCALE) + 1}, above {int(SCALE)} \(a chance of 1\): not a solved"):
        load_with(at, int(SCALE) + 1)


def test_a_chance_above_one_is_found_anywhere_in_a_layer_read_in_parts(first_layer):
    """A layer of Yacht holds hundreds of millions of values, which the check reads a part at a time: a value past
    the first part, or between parts, is checked as the first one is."""
    layout, layer, _, _ = first_layer
    check = layer_check(layout, layer)
    values = np.full((1 << 24) + (1 << 23) + 7, HALF, dtype=np.uint16)  # longer than one part, ties everywhere
    assert check(values) is None
    for at in (0, (1 << 23) + 1, (1 << 24) + 1, len(values) - 1):
        values[at] = int(SCALE) + 1
        assert check(values) == f"holds {int(SCALE) + 1}, above {int(SCALE)} (a chance of 1): not a solved layer", at
        values[at] = HALF


# --- the time left ---------------------------------------------------------------------------------------------------


def test_the_time_left_is_estimated_from_the_second_layer_on_counting_the_layer_under_way():
    sizes = [1, 10, 20, 30, 40]
    layout = SimpleNamespace(layers=[SimpleNamespace(num_values=n) for n in sizes], num_layers=len(sizes))
    assert LayerReport(layout, start_layer=3).remaining == 70
    stream = io.StringIO()
    report = LayerReport(layout, start_layer=1, stream=stream)
    assert report.remaining == 100 and report.seconds_left() is None
    report(1, 5, 30.0)  # half of the first layer: its time is the kernels' compile
    assert report.seconds_left() is None and stream.getvalue() == ""
    report(1, 10, 40.0)
    assert stream.getvalue() == "layer  1/4: 10 values in 40.0 s (0/s)\n"
    assert report.seconds_left() is None
    report(2, 10, 3.0)  # half of the second layer: 80 values left at 10 values in 3 s
    assert report.seconds_left() == pytest.approx(24.0)
    report(2, 20, 60.0)  # 70 values left at 20 values a minute
    assert report.seconds_left() == pytest.approx(210.0)
    assert stream.getvalue().splitlines()[-1] == "layer  2/4: 20 values in 60.0 s (0/s); estimated time left 3.5 min"
    report(3, 30, 0.0)  # a layer timed at nothing is said without a division by zero; 40 left at 50 in 60 s
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("layer  3/4: 30 values in 0.0 s (") and last.endswith("/s); estimated time left 0.8 min")
    assert estimate_seconds_left(30, 10, 2.0) == pytest.approx(6.0)  # two seconds of solving are enough for a rate


# --- a missing solution says what computes it ------------------------------------------------------------------------

SOLUTIONS = [(None, 0, "best"), ("optimal", 0, "best"), ("greedy", 1, "best"), ("optimal", 1, "exact2"), ("greedy", 0, "exact2")]
WHAT = {
    (None, 0, "best"): "both play to win",
    ("optimal", 0, "best"): "player 1's best response against optimal",
    ("greedy", 1, "best"): "player 2's best response against greedy",
    ("optimal", 1, "exact2"): "player 2's exact2 chances against optimal",
    ("greedy", 0, "exact2"): "player 1's exact2 chances against greedy",
}


@pytest.mark.parametrize("opponent, seat, strategy", SOLUTIONS)
def test_a_missing_yacht_solution_names_the_command_that_computes_exactly_it_its_time_and_its_size(
    cache, opponent, seat, strategy
):
    """Yacht's solve: 2.41 GiB of layers at 3.4 to 3.6 million values a second on 2 free cores, about 6 minutes
    (docs/playing-to-win.md)."""
    with pytest.raises(SolutionNotComputed) as missing:
        load_two_player("yacht", opponent, seat, strategy)
    message = str(missing.value)
    assert "\n" not in message and f"({WHAT[opponent, seat, strategy]}) is not computed yet" in message
    assert message.endswith("(about 6 min on 2 free cores, 2.4 GiB on disk)")
    command = re.search(r"`([^`]*)` computes it", message).group(1)
    prefix = "python -m agents.two_player "
    assert command.startswith(prefix)
    args = parse_args(command[len(prefix) :].split())
    assert args.rules == "yacht" and args.rows == ""
    assert solution_label(args.opponent, args.seat - 1, args.strategy) == solution_label(opponent, seat, strategy)


@pytest.mark.parametrize("seconds, minutes", [(150.5, 3), (91.0, 2), (89.0, 1), (10.0, 1)])
def test_the_time_a_missing_solve_takes_is_its_values_at_the_solve_s_rate_to_the_nearest_minute_one_at_least(
    cache, monkeypatch, seconds, minutes
):
    values = PairLayout(YACHT).total_values
    monkeypatch.setattr(two_player, "SOLVE_VALUES_PER_SECOND", values / seconds)
    with pytest.raises(SolutionNotComputed, match=rf"\(about {minutes} min on 2 free cores, 2\.4 GiB on disk\)$"):
        load_two_player("yacht")


@pytest.mark.parametrize("opponent, seat, strategy", SOLUTIONS)
def test_a_missing_solution_of_one_s_own_rules_names_the_call_that_computes_exactly_it(cache, opponent, seat, strategy):
    with pytest.raises(SolutionNotComputed) as missing:
        load_two_player(RULES, opponent, seat, strategy)
    message = str(missing.value)
    assert f"({WHAT[opponent, seat, strategy]})" in message and "(about 1 min on 2 free cores, 0.0 GiB on disk)" in message
    call = re.search(r"`([^`]*)` computes it", message).group(1)

    def solve(rules, opponent=None, seat=0, report=None, strategy="best"):
        return rules, opponent, seat, strategy

    fake = SimpleNamespace(two_player=SimpleNamespace(solve_two_player=solve))
    assert eval(call, {"agents": fake, "rules": RULES}) == (RULES, opponent, seat, strategy)


@pytest.mark.parametrize("opponent, seat, strategy", [(None, 0, "best"), ("optimal", 1, "best"), ("optimal", 0, "exact2")])
def test_a_solution_read_back_is_the_solved_one_deciding_alike(cache, monkeypatch, opponent, seat, strategy):
    solved = solve_two_player(RULES, opponent, seat, strategy=strategy)
    forget(monkeypatch)
    loaded = load_two_player(RULES, opponent, seat, strategy)
    assert load_two_player(RULES, opponent, seat, strategy) is loaded
    assert loaded.label == solved.label and loaded.decides == solved.decides == (strategy == "best")
    for mine, theirs in zip(loaded.layers, solved.layers, strict=True):
        assert np.asarray(mine).tobytes() == np.asarray(theirs).tobytes()
    every, hand = RULES.all_open, [1, 2, 2, 5, 6]
    if strategy == "best":
        for mover, other in ((every, every), (every, 0b01), (0b10, 0b01)):  # both players' turns
            np.testing.assert_array_equal(
                loaded.action_values(mover, other, 0, hand, 1), solved.action_values(mover, other, 0, hand, 1)
            )
    else:
        with pytest.raises(ValueError, match="holds a strategy's chances, not decisions"):
            loaded.action_values(every, every, 0, hand, 1)


# --- the command line ------------------------------------------------------------------------------------------------


def test_the_command_line_s_options_and_defaults():
    args = parse_args([])
    assert (args.rules, args.rows, args.opponent, args.seat, args.strategy, args.no_progress) == (
        "yacht",
        "",
        None,
        1,
        "best",
        False,
    )
    assert parse_args(["--no-progress", "--seat", "2"]).no_progress is True


@pytest.mark.parametrize("argv", [["--rules", "yahtzee"], ["--seat", "3"], ["--opponent", "perfect"], ["--strategy", "x"]])
def test_the_command_line_refuses_a_value_outside_its_choices(argv, capsys):
    with pytest.raises(SystemExit) as refused:
        main(argv)
    assert refused.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, error",
    [
        (["--rows", " , "], f"--rows names no row; expected some of {', '.join(YACHT.category_names)}"),
        (["--rows", "ones,sevens"], f"unknown category 'sevens'; expected one of {', '.join(YACHT.category_names)}"),
        (["--strategy", "exact2"], "strategy 'exact2' is played against an opponent: name one of optimal, greedy"),
    ],
)
def test_the_command_line_refuses_rows_or_a_strategy_it_cannot_solve_in_one_line_and_exit_code_2(cache, capsys, argv, error):
    assert main(["--no-progress", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"error: {error}\n"
    assert list(cache.iterdir()) == []


def test_the_command_line_solves_says_from_where_and_then_that_it_is_solved_and_prints_the_chance(cache, capsys, monkeypatch):
    layout, folder = PairLayout(RULES), solution_folder(RULES, "game")
    folder.mkdir()
    (folder / "layer-99.npy").open("wb").truncate(3 << 29)  # a sparse file of 1.5 GiB: the size counts the layer files
    assert main(CLI) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines[0] == f"yacht[ones,twos]: {layout.total_values:,} values in 4 layers; solving from layer 1 in {folder}"
    peak_now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux, in GiB
    said = re.fullmatch(r"\d+\.\d s, peak memory (\d+\.\d\d) GiB, (\d+\.\d\d) GiB on disk", lines[-1])
    assert said and peak_now - 0.01 <= float(said.group(1)) <= peak_now + 0.005 and said.group(2) == "1.50"
    forget(monkeypatch)
    chance = load_two_player(RULES).start_value()
    assert out == f"player one's chance of winning: {chance:.6f} (a tie counts 1/2)\n"
    remove_layer(folder, 3)
    remove_layer(folder, 4)
    forget(monkeypatch)
    assert main(CLI) == 0
    again_out, again_err = capsys.readouterr()
    assert again_err.splitlines()[0].endswith("; solving from layer 3 in " + str(folder)) and again_out == out
    forget(monkeypatch)
    assert main(CLI) == 0
    solved_out, solved_err = capsys.readouterr()
    assert solved_err.splitlines()[0] == f"yacht[ones,twos]: {layout.total_values:,} values in 4 layers; solved in {folder}"
    assert len(solved_err.splitlines()) == 2 and solved_out == out


def test_the_command_line_with_the_cache_off_solves_in_memory_and_says_no_folder(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", "")
    monkeypatch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())
    monkeypatch.chdir(tmp_path)
    assert main(CLI) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith(" values in 4 layers; solving from layer 1")
    assert lines[-1].endswith(" GiB, 0.00 GiB on disk") and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("opponent", ["optimal", "greedy"])
@pytest.mark.parametrize("seat", [1, 2])
def test_the_command_line_prints_the_best_responder_s_own_chance(cache, capsys, monkeypatch, seat, opponent):
    """The two players' chances add to 1 (a tie counts 1/2 to each): player two's is 1 less player one's. (Against
    optimal in the first seat the chance is exactly 1/2 on these two rows, the same either way: greedy tells them apart.)"""
    assert main([*CLI, "--opponent", opponent, "--seat", str(seat)]) == 0
    out = capsys.readouterr().out
    forget(monkeypatch)
    first = load_two_player(RULES, opponent, seat - 1).start_value()
    mine = first if seat == 1 else 1 - first
    assert opponent == "optimal" or abs(mine - (1 - mine)) > 1e-3
    assert out == f"player {seat}'s best response to {opponent} wins {mine:.6f} (a tie counts 1/2)\n"
    assert main([*CLI, "--opponent", opponent] + (["--seat", "2"] if seat == 2 else [])) == 0
    assert capsys.readouterr().out == out  # seat 1 by default


def test_the_command_line_solves_the_game_before_exact2_saying_so_only_when_it_is_missing(cache, capsys, monkeypatch):
    assert main([*CLI, "--opponent", "optimal", "--strategy", "exact2", "--seat", "2"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == "the game (both play to win) is solved first: the exact2 decisions are its"
    forget(monkeypatch)
    mine = 1 - load_two_player(RULES, "optimal", 1, "exact2").start_value()
    assert out == f"player 2's exact2 against optimal wins {mine:.6f} (a tie counts 1/2)\n"
    assert main([*CLI, "--opponent", "optimal", "--strategy", "exact2"]) == 0
    out, err = capsys.readouterr()
    assert "solved first" not in err and out.startswith("player 1's exact2 against optimal wins ")
    assert main([*CLI, "--opponent", "greedy"]) == 0
    assert "solved first" not in capsys.readouterr().err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("argv, terminal, bar", [([], True, True), (["--no-progress"], True, False), ([], False, False)])
def test_the_progress_bar_is_drawn_on_a_terminal_unless_turned_off(cache, monkeypatch, argv, terminal, bar):
    drawn = []

    def with_bar(rules, opponent, seat, strategy, layout, start_layer, report):
        drawn.append((rules.name, opponent, seat, strategy, start_layer))
        return solve_two_player(rules, opponent, seat, strategy=strategy)

    monkeypatch.setattr(command_line, "_solve_with_bar", with_bar)
    monkeypatch.setattr(sys, "stderr", Terminal() if terminal else io.StringIO())
    assert main(["--rules", "yacht", "--rows", ROWS, *argv]) == 0
    assert drawn == ([("yacht[ones,twos]", None, 0, "best", 1)] if bar else [])


class Bar:
    """What the progress bar is told: its total, and each update."""

    def __init__(self, *columns, console):
        self.console, self.updates, self.total = console, [], None

    def __enter__(self):
        Bar.last = self
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, description, total, left):
        self.total = total
        return "task"

    def update(self, task, completed, description, left):
        assert task == "task"
        self.updates.append((completed, description, left))


class TenMinutesLeft(LayerReport):
    def seconds_left(self):
        return 600.0


def test_the_progress_bar_counts_the_values_solved_from_the_layer_it_starts_at(cache, monkeypatch, capsys):
    monkeypatch.setattr("rich.progress.Progress", Bar)
    layout, folder = PairLayout(RULES), solution_folder(RULES, "game")
    solve_two_player(RULES)
    remove_layer(folder, 3)
    remove_layer(folder, 4)
    forget(monkeypatch)
    report = TenMinutesLeft(layout, 3)
    solution = command_line._solve_with_bar(RULES, None, 0, "best", layout, 3, report)
    sizes = [layer.num_values for layer in layout.layers]
    bar = Bar.last
    assert bar.total == sizes[3] + sizes[4]
    ends = {description: completed for completed, description, _ in bar.updates}
    assert ends == {"layer 3/4": sizes[3], "layer 4/4": sizes[3] + sizes[4]}
    assert {left for _, _, left in bar.updates} == {"about 10.0 min left"}
    assert all(0 < completed <= bar.total for completed, _, _ in bar.updates)
    assert [line[:11] for line in capsys.readouterr().err.splitlines()] == ["layer  3/4:", "layer  4/4:"]
    assert 0 < solution.start_value() < 1


def test_the_progress_bar_of_the_first_turn_alone_ends_full_at_its_one_value(cache, monkeypatch, capsys):
    """Only the first turn left to solve: one pair (every row open for both), one lead (0), so one value."""
    monkeypatch.setattr("rich.progress.Progress", Bar)
    layout, folder = PairLayout(RULES), solution_folder(RULES, "game")
    solve_two_player(RULES)
    remove_layer(folder, 4)
    forget(monkeypatch)
    assert layout.layers[4].num_values == 1
    command_line._solve_with_bar(RULES, None, 0, "best", layout, 4, TenMinutesLeft(layout, 4))
    bar = Bar.last
    assert bar.total == 1 and [completed for completed, _, _ in bar.updates][-1] == 1


def test_the_command_line_says_how_long_the_solve_took(cache, capsys, monkeypatch):
    clock = iter([100.0, 112.5])  # the command's start, then its end
    monkeypatch.setattr(command_line, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    assert main(CLI) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("12.5 s, peak memory ")


def test_a_layer_solved_in_many_batches_is_the_layer_solved_in_one(cache, monkeypatch):
    """Yacht's layers are solved a batch of pairs at a time: batches of about 3 values (whole pairs each) must store
    what one batch per layer stores, every pair of every batch solved."""
    import agents.two_player.solve as solve_module

    whole = solve_two_player(RULES)
    forget(monkeypatch)
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", "")
    monkeypatch.setattr(solve_module, "VALUES_PER_BATCH", 3)
    assert max(layer.num_pairs for layer in PairLayout(RULES).layers) > 1  # more than one batch in a layer
    batched = solve_two_player(RULES)
    for mine, theirs in zip(batched.layers, whole.layers, strict=True):
        assert np.asarray(mine).tobytes() == np.asarray(theirs).tobytes()
