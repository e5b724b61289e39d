"""``yacht serve`` on PostgreSQL: the same code as on SQLite, against a throwaway server this test starts.

The cluster is made with ``initdb`` in a temporary folder and run with ``pg_ctl`` on a free port of
127.0.0.1 (as the ``postgres`` user when the tests run as root, since initdb refuses root), and is
removed afterwards. Skipped, with the reason, where the PostgreSQL binaries or psycopg are missing.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("psycopg", reason="PostgreSQL needs psycopg 3: pip install 'yacht-rl[serve]'")

from tests.yacht_play.test_serve_api import TestClient, play_out  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.match import Match  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402


def test_a_game_on_postgresql_survives_a_new_server(postgres_url):
    engine = db.connect(postgres_url)
    assert engine.dialect.name == "postgresql"
    assert db.migrate(engine) == len(db.MIGRATIONS)
    service = GameService(engine, ["optimal"])
    with TestClient(create_app(service)) as client:
        secret = client.post("/api/games", json={"name": "pg", "mode": "table", "agents": ["optimal"], "coach": True}).json()[
            "secret"
        ]
        view = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0]}).json()
        view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": "choice"}).json()
        seen = view["seq"]
    engine.dispose()

    # a new server process on the same database: the game is where it was, and plays to the end
    engine = db.connect(postgres_url)
    service = GameService(engine, ["optimal"])
    with TestClient(create_app(service)) as client:
        again = client.get(f"/api/games/{secret}").json()
        assert again["seq"] == seen and again["current"]["turn"] == 2 and again["sheets"] == view["sheets"]
        final = play_out(client, service, secret, random.Random(9))
    game = db.load_record(engine, db.game_row(engine, secret))
    match = Match.resume(game)
    assert match.finished and match.totals == [s["total"] for s in final["sheets"]] == game.end["totals"]
    assert db.all_games(engine, finished_only=True)[0].game_id == game.game_id


def test_an_import_on_postgresql_adds_every_game_or_none(postgres_url, tmp_path, capsys, monkeypatch):
    from tests.yacht_play.test_hostile_files import forged, one_line_refusal, run_import
    from yacht_play.match import write_agent_games

    good, bad = tmp_path / "good.jsonl", tmp_path / "forged.jsonl"
    write_agent_games(good, "greedy", games=2, seed=11)
    write_agent_games(bad, "greedy", games=1, seed=12)
    forged_data, line = forged(bad.read_bytes())
    bad.write_bytes(forged_data)
    ids = {game.game_id for game in db.all_games(db.connect(postgres_url))}
    code, err = run_import(good, bad, db=postgres_url, capsys=capsys)
    one_line_refusal(code, err, f"{bad}:{line}", "nothing was imported")
    assert {game.game_id for game in db.all_games(db.connect(postgres_url))} == ids

    def fail_at_the_commit(engine, *args, **kwargs):
        db.committed(engine, lambda connection: connection.exec_driver_sql("INSERT INTO nowhere VALUES (1)"))

    real_insert = db.insert_game
    monkeypatch.setattr(db, "insert_game", lambda *args, **kwargs: real_insert(*args, **kwargs) or fail_at_the_commit(*args))
    code, err = run_import(good, db=postgres_url, capsys=capsys)
    one_line_refusal(code, err, "the database refused the import", "nothing was imported")
    assert {game.game_id for game in db.all_games(db.connect(postgres_url))} == ids
    monkeypatch.undo()
    code, err = run_import(good, db=postgres_url, capsys=capsys)
    assert code == 0 and "2 games added" in err, err
