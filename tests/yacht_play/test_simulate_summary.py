"""``yacht simulate-players``' last lines: how many games finished, the decisions' loss, and the errors counted and
the first five of them quoted, with the exit status 1 when any request failed; what it plays (its defaults, the agents
it meets, the rules it asks for); and how one game reads the server's answers (a refused move, a move behind, the time
a move took) and how a person chooses."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

httpx = pytest.importorskip("httpx", reason="the simulated people need httpx")

from yacht_play import simulate  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.simulate import Played  # noqa: E402


def offer_optimal(monkeypatch) -> None:
    """The server's list of agents: optimal alone."""
    monkeypatch.setattr(httpx, "get", lambda url, timeout: SimpleNamespace(json=lambda: {"agents": [{"policy": "optimal"}]}))


def summary(monkeypatch, capsys, played: list[Played], players: int = 2, options=()) -> tuple[int, list[str]]:
    """``main``'s exit status and stderr lines, the server's list of agents and the games played given."""
    offer_optimal(monkeypatch)

    async def games(*args, **kwargs):
        return played

    monkeypatch.setattr(simulate, "simulate", games)
    argv = ["simulate-players", "--url", "http://127.0.0.1:9", "--players", str(players), "--temperature", "0.5", *options]
    code = main(argv)
    return code, capsys.readouterr().err.splitlines()


def finished(name: str, losses: list[float], errors: list[str] = ()) -> Played:
    return Played(name, "duplicate", ["optimal"], expected_losses=losses, errors=list(errors), winners=[name])


def test_games_without_errors_are_summed_up_in_one_line_and_exit_0(monkeypatch, capsys):
    code, lines = summary(monkeypatch, capsys, [finished("sim0000", [0.0, 1.0]), finished("sim0001", [2.0])])
    assert code == 0 and len(lines) == 1
    assert lines[0].startswith("yacht simulate-players: 2 of 2 games finished in ")
    assert lines[0].endswith(" s by 2 players; 3 decisions, expected loss per decision 1.000 (temperature 0.5); 0 errors")
    code, lines = summary(monkeypatch, capsys, [finished("sim0000", [0.5])], players=1)
    assert code == 0 and lines[0].endswith(
        " s by 1 player; 1 decision, expected loss per decision 0.500 (temperature 0.5); 0 errors"
    )


@pytest.mark.parametrize("count, said", [(1, "1 error"), (7, "7 errors")])
def test_errors_are_counted_with_their_noun_and_the_first_five_quoted_then_exit_1(monkeypatch, capsys, count, said):
    unfinished = Played("sim0001", "duplicate", ["optimal"], errors=[f"view: 500 {k}" for k in range(count)])
    code, lines = summary(monkeypatch, capsys, [finished("sim0000", []), unfinished], players=1)
    assert code == 1 and lines[0].endswith(
        f" s by 1 player; 0 decisions, expected loss per decision nan (temperature 0.5); {said}"
    )
    assert "1 of 2 games finished" in lines[0]
    assert lines[1:] == [f"yacht simulate-players: view: 500 {k}" for k in range(min(count, 5))]


@pytest.mark.parametrize("option", ["--players", "--games"])
def test_no_players_or_no_games_is_refused_in_one_line_before_any_request(capsys, option):
    assert main(["simulate-players", "--url", "http://127.0.0.1:9", option, "0"]) == 2
    assert capsys.readouterr().err == f"yacht simulate-players: {option} must be at least 1, got 0\n"


def test_a_move_answered_409_is_looked_at_again_and_not_counted_as_an_error():
    """A retried move whose first answer was lost finds the game ahead of it (409): the game is read again."""
    chooser = SimpleNamespace(requested=None, choose=lambda current, view: (7, 0.5))
    played = Played("sim0000", "solitaire", [])
    game = simulate.play_game(chooser, played)
    assert next(game)[:2] == ("POST", "/api/games")
    assert game.send((201, {"secret": "s"})) == ("GET", "/api/games/s", None)
    view = {"finished": False, "current": {"kind": "human"}, "seq": 3}
    assert game.send((200, view)) == ("POST", "/api/games/s/actions", {"seq": 3, "action": 7})
    assert game.send((409, {"error": "behind"})) == ("GET", "/api/games/s", None)
    with pytest.raises(StopIteration):
        game.send((200, {"finished": True, "sheets": [{"total": 150}], "winners": ["sim0000"]}))
    assert played.errors == [] and played.acknowledged == {} and played.totals == [150]


@pytest.mark.parametrize("status", [400, 410, 422, 500, 503])
def test_a_move_answered_with_any_other_error_is_counted_and_ends_the_game(status):
    """Only 409 (behind) is read again: any other refusal of a move is an error of the run, quoted with its move."""
    chooser = SimpleNamespace(requested=None, choose=lambda current, view: (7, 0.5))
    played = Played("sim0000", "solitaire", [])
    game = simulate.play_game(chooser, played)
    next(game)
    game.send((201, {"secret": "s"}))
    game.send((200, {"finished": False, "current": {"kind": "human"}, "seq": 3}))
    with pytest.raises(StopIteration):
        game.send((status, {"error": "no"}))
    assert played.errors == [f"action 3: {status} {{'error': 'no'}}"] and played.totals is None


def test_a_moves_latency_is_timed_without_the_agents_thinking_on_both_clocks():
    """The client's round trip and the server's own time (Server-Timing, in ms) of a move, each less the agents'
    thinking the answer reports; that thinking kept apart when agents moved; other answers are not timed."""
    played = Played("sim0000", "solitaire", [])
    answer = {"seq": 4, "agent_seconds": 0.125, "events": [{"kind": "human"}, {"kind": "agent"}]}
    moved = SimpleNamespace(status_code=200, headers={"server-timing": "app;dur=250.0"})
    simulate._time_request(played, "POST", moved, answer, 0.5)
    assert played.latencies == [0.375] and played.server_latencies == [0.125] and played.agent_seconds == [0.125]
    alone = {"seq": 5, "events": [{"kind": "human"}]}  # the person's move only: no agent thought in this request
    simulate._time_request(played, "POST", SimpleNamespace(status_code=200, headers={}), alone, 0.25)
    assert played.latencies == [0.375, 0.25] and played.server_latencies == [0.125] and played.agent_seconds == [0.125]
    for method, status in (("GET", 200), ("POST", 409)):
        simulate._time_request(played, method, SimpleNamespace(status_code=status, headers={}), answer, 1.0)
    assert played.latencies == [0.375, 0.25]


def test_without_a_view_a_person_chooses_among_the_rows_now_offers_under_its_own_rules():
    """The chooser alone (no view of the game): the rules it was made with, the rows ``current["now"]`` names open; at
    temperature 0 it plays the optimum's choice and expects to lose nothing."""
    from yacht_env.actions import ActionLayout
    from yacht_env.rules import YACHT

    chooser = simulate.Chooser(0.0, np.random.default_rng(0))
    layout, names = ActionLayout(YACHT), YACHT.category_names
    sixes = {"dice": [6, 6, 6, 6, 6], "rolls_left": 0}
    assert chooser.choose({**sixes, "now": {name: 0 for name in names}}) == (layout.score_action(names.index("yacht")), 0.0)
    # two rows left: 1 now and a whole turn for choice (about 23.3) beats 16 now and a turn for ones (5 (1 - (5/6)^3) = 2.1)
    only = {"dice": [1, 2, 3, 4, 6], "rolls_left": 0, "now": {"ones": 1, "choice": 16}}
    assert chooser.choose(only) == (layout.score_action(names.index("ones")), 0.0)


@pytest.mark.parametrize(
    "options, refusal",
    [
        (["--mode", "solitaire"], None),
        (["--mode", "solitaire", "--agents", "greedy"], None),  # a game alone has no agents to offer
        (["--mode", "table", "--agents", "optimal"], None),
        (["--mode", "duplicate", "--agents", ""], "--agents (none): the server offers optimal"),
        (["--mode", "table", "--agents", " , "], "--agents (none): the server offers optimal"),
        (["--mode", "table", "--agents", "optimal,greedy"], "--agents greedy: the server offers optimal"),
    ],
)
def test_a_table_needs_agents_the_server_offers_and_a_game_alone_none(monkeypatch, capsys, options, refusal):
    code, lines = summary(monkeypatch, capsys, [finished("sim0000", [0.0])], players=1, options=options)
    if refusal is None:
        assert code == 0 and lines[0].startswith("yacht simulate-players: 1 of 1 games finished")
    else:
        assert code == 2 and lines == [f"yacht simulate-players: {refusal}"]


def test_the_defaults_played_are_those_the_help_states(monkeypatch, capsys):
    """With no --players, --games or --temperature, simulate-players plays the numbers its --help gives."""
    import re

    with pytest.raises(SystemExit):
        main(["simulate-players", "--help"])
    options = " ".join(capsys.readouterr().out.split("options:")[1].split())
    stated = {
        option: float(re.search(rf"{option} [A-Z]+ [^()]*\(default ([0-9.]+)\)", options).group(1))
        for option in ("--players", "--games", "--temperature")
    }
    played = {}

    async def games(url, players, games, temperature, *args, **kwargs):
        played.update({"--players": players, "--games": games, "--temperature": temperature})
        return [finished("sim0000", [0.0])]

    offer_optimal(monkeypatch)
    monkeypatch.setattr(simulate, "simulate", games)
    assert main(["simulate-players", "--url", "http://127.0.0.1:9", "--agents", "optimal"]) == 0
    assert played == stated


@pytest.mark.parametrize("rules, requested", [(None, None), ("yacht", "yacht"), ("yahtzee", "yahtzee")])
def test_a_person_asks_for_the_rules_it_was_made_with_and_for_none_when_made_without(rules, requested):
    """A chooser made without rules lets the server choose (its default); one made with rules asks for those."""
    chooser = simulate.Chooser(1.0, np.random.default_rng(0), rules=rules)
    method, path, request = next(simulate.play_game(chooser, Played("sim0000", "solitaire", [])))
    assert (method, path) == ("POST", "/api/games") and request.get("rules") == requested
    assert ("rules" in request) is (rules is not None)
    assert request["coach"] is False  # no coach unless asked for (run_sync and run_async pass theirs)


@pytest.mark.parametrize("mode", ["table", "duplicate"])
def test_a_persons_games_meet_the_agents_in_turn_and_a_game_alone_none(mode):
    agents = ["optimal", "greedy"]
    assert [simulate.opponents_of(mode, agents, index) for index in range(3)] == [["optimal"], ["greedy"], ["optimal"]]
    assert simulate.opponents_of(mode, [], 0) == []
    assert [simulate.opponents_of("solitaire", agents, index) for index in range(2)] == [[], []]
