"""SIGKILL ``yacht serve`` while simulated people play, start it again, let them retry: every game in the
database replays as a legal game, no acknowledged decision is missing, none is doubled.

``pytest -m slow tests/yacht_play/test_serve_faults.py -s`` runs a longer version with more kills.
"""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
httpx = pytest.importorskip("httpx", reason="the simulated people need httpx")

from tests.yacht_play.serve_support import Server  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.simulate import Chooser, Played, audit, run_async  # noqa: E402


def play_while_killing(tmp_path, players: int, games: int, kills: int, every: int) -> tuple[dict, list[Played]]:
    server = Server(tmp_path / "faults.db", agents="greedy,optimal", options=("--new-games-per-minute", "0")).start()
    played: list[Played] = []

    async def everyone():
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:

            async def person(n):
                chooser = Chooser(1.0, np.random.default_rng(n))
                for g in range(games):
                    mode, agents = [("solitaire", []), ("table", ["optimal"]), ("duplicate", ["greedy"])][(n + g) % 3]
                    played.append(await run_async(client, chooser, Played(f"p{n}", mode, agents)))

            await asyncio.gather(*(person(n) for n in range(players)))

    thread = threading.Thread(target=lambda: asyncio.run(everyone()), daemon=True)
    thread.start()
    killed = 0
    try:
        engine = db.connect(str(server.db))
        for k in range(kills):  # kill after every `every` stored decisions, so mid-play however fast the machine is
            while thread.is_alive() and db.count_decisions(engine) < (k + 1) * every:
                time.sleep(0.05)
            if not thread.is_alive():
                break
            server.kill()
            killed += 1
            time.sleep(0.3)
            server.start()
        thread.join(300)
        assert not thread.is_alive(), "the players did not finish within 300 s"
    finally:
        server.stop()
    counts = audit(db.connect(str(server.db)), played)
    counts["retries"] = sum(p.retries for p in played)
    counts["errors"] = sum(len(p.errors) for p in played)
    counts["kills"] = killed
    print(f"\nfault test: {counts}")
    return counts, played


def check(counts: dict, played: list[Played], players: int, games: int) -> None:
    assert [e for p in played for e in p.errors] == []
    assert counts["games"] == counts["finished"] == players * games
    assert counts["missing"] == counts["unacknowledged"] == counts["doubled_or_gaps"] == counts["illegal"] == 0
    assert counts["acknowledged"] == sum(len(p.acknowledged) for p in played) > 0


def test_sigkill_during_play_loses_and_doubles_nothing(tmp_path):
    counts, played = play_while_killing(tmp_path, players=4, games=2, kills=1, every=100)
    check(counts, played, 4, 2)
    assert counts["kills"] == 1 and counts["retries"] > 0  # the kill happened while people were playing


@pytest.mark.slow
def test_sigkill_again_and_again_under_load(tmp_path):
    counts, played = play_while_killing(tmp_path, players=20, games=5, kills=5, every=800)
    check(counts, played, 20, 5)
    assert counts["kills"] == 5


def test_yacht_simulate_players_fills_a_database(tmp_path, capsys):
    from yacht_play.cli import main

    server = Server(tmp_path / "sim.db", agents="greedy,random", options=("--new-games-per-minute", "0")).start()
    try:
        assert (
            main(
                [
                    "simulate-players",
                    "--url",
                    server.url,
                    "--players",
                    "2",
                    "--games",
                    "2",
                    "--mode",
                    "duplicate",
                    "--agents",
                    "greedy,random",
                    "--temperature",
                    "0.5",
                ]
            )
            == 0
        )
        assert "4 of 4 games finished" in capsys.readouterr().err
        assert main(["simulate-players", "--url", server.url, "--agents", "optimal"]) == 2
        assert "--agents optimal: the server offers greedy, random" in capsys.readouterr().err
    finally:
        server.stop()
    games = db.all_games(db.connect(str(tmp_path / "sim.db")), finished_only=True)
    # each person meets the agents in turn: both people meet both agents
    met = sorted((g.players[0]["name"], g.players[1]["name"]) for g in games)
    assert met == [("sim0000", "greedy"), ("sim0000", "random"), ("sim0001", "greedy"), ("sim0001", "random")]
    assert main(["simulate-players", "--url", server.url]) == 2  # the server is gone
    assert "no yacht serve answers" in capsys.readouterr().err


def test_yacht_simulate_players_exits_1_naming_the_requests_the_server_refused(tmp_path, capsys):
    from yacht_play.cli import main

    server = Server(tmp_path / "sim.db", options=("--new-games-per-minute", "1")).start()
    try:
        assert main(["simulate-players", "--url", server.url, "--players", "1", "--games", "2"]) == 1
    finally:
        server.stop()
    err = capsys.readouterr().err.splitlines()
    assert "1 of 2 games finished" in err[0] and " s by 1 player; " in err[0] and err[0].endswith("; 1 error")
    assert err[1].startswith("yacht simulate-players: create: 429 ")
