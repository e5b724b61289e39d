"""The reference ceiling (agents.evaluation.ceiling): a player told the optimum's final score, against the optimum."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents.evaluation.ceiling import ceiling_match, main
from agents.evaluation.tournament import deal_dice
from agents.solvers.optimal import solve
from agents.solvers.target import solve_target
from tests.agents.test_target import MINI
from yacht_env.game import GameBatch

GAMES = 3000


def optimal_totals(faces: np.ndarray) -> np.ndarray:
    """The optimum's final totals playing alone on each of ``faces`` (games, turns, rolls, dice)."""
    optimal = solve(MINI)
    games = GameBatch(MINI, 1, len(faces))
    games.start(faces[:, None])
    seats = np.zeros(len(faces), dtype=np.int64)
    while not games.over.all():
        rows = np.flatnonzero(~games.over)
        games.play(optimal.best_actions_batch(*games.position(rows, seats[rows])), rows)
    return games.totals[:, 0]


@pytest.fixture(scope="module")
def match():
    return ceiling_match(GAMES, seed=5, rules=MINI)


def test_the_optimum_plays_the_partner_dice_and_knows_final_faces_its_final_score(match):
    result, log = match
    assert log.names == ["knows-final", "optimal"] and log.totals.shape == (GAMES, 2) and result.games == GAMES
    faces = deal_dice(5, GAMES // 2, 2, MINI).reshape((GAMES,) + (MINI.num_turns, MINI.rolls_per_turn, MINI.num_dice))
    optimum = optimal_totals(faces)
    np.testing.assert_array_equal(log.totals[:, 1], optimum.reshape(-1, 2)[:, ::-1].reshape(-1))


def test_knows_final_wins_its_exact_share_given_the_score_it_must_beat(match):
    """Told ``y``, its chance of beating it (a tie half) is the beat table's ``A[all rows, y]``: the sample agrees."""
    _, log = match
    knows, known = log.totals[:, 0], log.totals[:, 1]
    shares = (knows > known) + 0.5 * (knows == known)
    beat = solve_target(MINI, tie=0.5, use_disk_cache=False)
    exact = beat.lookup(np.full(GAMES, MINI.all_open), known)
    difference = shares - exact
    assert abs(difference.mean()) < 4 * difference.std() / np.sqrt(GAMES) + 1e-12
    assert shares.mean() > 0.5  # knowing the score to beat is worth something against the optimum itself


def test_the_command_refuses_too_few_games(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--games", "3"])
    assert exit_info.value.code == 2 and "--games must be at least 4" in capsys.readouterr().err


def test_games_are_played_in_batches_of_whole_deals_and_give_the_same_totals(monkeypatch):
    """``batch_size`` games at once (a deal's two at least): memory is bounded, and the games are those of one batch."""
    import agents.evaluation.ceiling as ceiling

    whole = ceiling_match(14, seed=3, rules=MINI)[1].totals
    played, play = [], ceiling._play_solitaire

    def counted(rules, faces, choose):
        played.append(len(faces))
        return play(rules, faces, choose)

    monkeypatch.setattr(ceiling, "_play_solitaire", counted)
    for batch_size, expected in ((4, [4, 4, 4, 2]), (5, [4, 4, 4, 2]), (1, [2] * 7)):
        played.clear()
        totals = ceiling_match(14, seed=3, rules=MINI, batch_size=batch_size)[1].totals
        np.testing.assert_array_equal(totals, whole)
        assert played == [size for size in expected for _ in range(2)]  # the optimum's games, then knows-final's


def test_the_options_default_to_what_their_help_says():
    from agents.evaluation.ceiling import argument_parser

    said = {action.dest: re.search(r"default ([^)]+)\)", action.help or "") for action in argument_parser()._actions}
    defaults = {action.dest: action.default for action in argument_parser()._actions}
    assert {dest: str(defaults[dest]) for dest, found in said.items() if found} == {
        dest: found[1] for dest, found in said.items() if found
    }
    assert set(dest for dest, found in said.items() if found) == {"games", "seed"}


def test_a_figures_file_that_cannot_be_written_is_refused_before_the_games(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--games", "4", "--json", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(f"error: cannot write {tmp_path}: ") and err.count("\n") == 1


def test_a_figures_file_that_cannot_be_written_after_the_games_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    import agents.evaluation.ceiling as ceiling
    from yacht_env.atomic_files import OutputError

    def disk_full(path, result):
        raise OutputError(path, "No space left on device")

    monkeypatch.setattr(ceiling, "save_tournament_json", disk_full)
    with pytest.raises(SystemExit) as exit_info:
        main(["--games", "4", "--json", str(tmp_path / "ceiling.json")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err == f"error: cannot write {tmp_path / 'ceiling.json'}: No space left on device\n"
