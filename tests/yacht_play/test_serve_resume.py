"""Nothing lost: SIGKILL ``yacht serve`` while players are acting, start it again on the same database,
and every acknowledged decision is there and every game continues from its exact position.

Run with ``pytest -m slow tests/yacht_play/test_serve_resume.py -s`` to see the counts (acknowledged vs found).
"""

from __future__ import annotations

import random
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
httpx = pytest.importorskip("httpx", reason="the serve tests need httpx")

from tests.yacht_play.serve_support import Server  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.match import Match  # noqa: E402

GAMES = [("solitaire", []), ("table", ["optimal", "random"]), ("duplicate", ["greedy"]), ("table", ["greedy"])]


def choose(view: dict, rng: random.Random) -> dict:
    current = view["current"]
    if current["rolls_left"] > 0 and rng.random() < 0.6:
        return {"hold": sorted(rng.sample(range(5), rng.randrange(5)))}
    return {"row": rng.choice(sorted(current["now"]))}


class Player(threading.Thread):
    """Plays one game as fast as the server answers; remembers every decision the server acknowledged."""

    def __init__(self, url: str, secret: str, seed: int):
        super().__init__(daemon=True)
        self.url, self.secret, self.rng = url, secret, random.Random(seed)
        self.acknowledged: list[dict] = []  # every decision (the person's and the agents') the server reported
        self.view = None

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            try:
                self.view = client.get(f"/api/games/{self.secret}").json()
                self.acknowledged = list(self.view["events"])
                while not self.view["finished"]:
                    body = {"seq": self.view["seq"], **choose(self.view, self.rng)}
                    response = client.post(f"/api/games/{self.secret}/actions", json=body)
                    if response.status_code != 200:
                        return
                    self.view = response.json()
                    self.acknowledged += self.view["events"]
            except httpx.HTTPError:  # the server was killed under us
                return


@pytest.mark.slow  # two server starts and four concurrent games: ~30 s; CI kills and resumes in the browser test
def test_sigkill_loses_no_acknowledged_decision(tmp_path, capsys):
    server = Server(tmp_path / "yacht.db").start()
    try:
        with httpx.Client(base_url=server.url) as client:
            secrets = [
                client.post("/api/games", json={"name": f"p{i}", "mode": mode, "agents": agents}).json()["secret"]
                for i, (mode, agents) in enumerate(GAMES)
            ]
        players = [Player(server.url, secret, seed) for seed, secret in enumerate(secrets)]
        for player in players:
            player.start()
        deadline = time.monotonic() + 60
        while sum(len(p.acknowledged) for p in players) < 60 and time.monotonic() < deadline:
            time.sleep(0.02)
        server.kill()  # in the middle of games, with requests in flight
        for player in players:
            player.join(30)
        acknowledged = [list(p.acknowledged) for p in players]
        assert all(0 < len(a) for a in acknowledged) and not all(p.view["finished"] for p in players)

        server.start()  # the same database, a new process
        found = []
        with httpx.Client(base_url=server.url, timeout=30) as client:
            for secret in secrets:
                found.append(client.get(f"/api/games/{secret}?since=0").json()["events"])
        # every acknowledged decision is there, in order; besides them at most what the requests in flight committed
        missing = sum(
            len(seen) - next((i for i, (a, b) in enumerate(zip(seen, events)) if a != b), min(len(seen), len(events)))
            for seen, events in zip(acknowledged, found)
        )
        total_acknowledged = sum(map(len, acknowledged))
        total_found = sum(len(f) for f in found)
        with capsys.disabled():
            print(
                f"\nkill-and-resume: {len(secrets)} games, {total_acknowledged} decisions acknowledged before SIGKILL, "
                f"{total_found} found after restart, {missing} acknowledged missing (per game: acknowledged "
                f"{[len(a) for a in acknowledged]}, found {[len(f) for f in found]})"
            )
        assert missing == 0 and total_found >= total_acknowledged
        # every game continues from its position
        with httpx.Client(base_url=server.url, timeout=30) as client:
            rng = random.Random(100)
            for secret, events in zip(secrets, found):
                view = client.get(f"/api/games/{secret}?since={len(events)}").json()
                assert view["seq"] == len(events)
                for _ in range(3):
                    if view["finished"]:
                        break
                    response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **choose(view, rng)})
                    assert response.status_code == 200, response.text
                    view = response.json()
                assert view["seq"] > len(events) or view["finished"]
    finally:
        server.stop()
    engine = db.connect(str(tmp_path / "yacht.db"))
    for game in db.all_games(engine):
        match = Match.resume(game)  # each game replays as a legal game of the project's rules, no decision twice
        assert len(match.decisions) == len(game.decisions) and match.finished == (game.end is not None)
