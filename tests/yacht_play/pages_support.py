"""A database of finished games under two rule sets, for the tests of the pages the server writes (the report, a
player's games): Ann plays Yacht alone and against greedy, and Yahtzee alone; Bea plays Yacht against random."""

from __future__ import annotations

from pathlib import Path

import numpy as np

GAMES = [  # (name, rules, mode, agents)
    ("Ann", "yacht", "solitaire", []),
    ("Ann", "yacht", "table", ["greedy"]),
    ("Ann", "yahtzee", "solitaire", []),
    ("Bea", "yacht", "table", ["random"]),
]


def play_games(client, games=GAMES) -> list[str]:
    """Play ``games`` to the end through the API of ``client`` (a simulated person at temperature 1); their secrets."""
    from yacht_play.simulate import Chooser

    secrets = []
    for i, (name, rules, mode, agents) in enumerate(games):
        answer = client.post("/api/games", json={"name": name, "mode": mode, "agents": agents, "rules": rules})
        assert answer.status_code == 201, answer.text
        secret = answer.json()["secret"]
        chooser = Chooser(1.0, np.random.default_rng(i))
        view = client.get(f"/api/games/{secret}").json()
        while not view["finished"]:
            action, _ = chooser.choose(view["current"], view)
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "action": action}).json()
        secrets.append(secret)
    return secrets


def played_database(path: Path) -> Path:
    """An SQLite database at ``path`` holding :data:`GAMES`, finished (a server can then be started on it)."""
    from tests.yacht_play.test_serve_api import TestClient  # imported there without Starlette's warning about httpx
    from yacht_play import store
    from yacht_play.serve.app import create_app
    from yacht_play.serve.games import GameService

    service = GameService(store.connect(str(path)), ["greedy", "random"])
    with TestClient(create_app(service)) as client:
        play_games(client)
    service.engine.dispose()
    return path
