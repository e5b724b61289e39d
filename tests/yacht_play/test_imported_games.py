"""Games from record files: a schema-1 record whose dice no seed deals is refused by every command, and the games
``yacht import`` brings in are marked as imported in the database (an old database is migrated forward), in a
player's games, and in the report, which leaves them out unless asked for; on SQLite and PostgreSQL.
"""

from __future__ import annotations

import itertools
import json
import random
import uuid
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

from sqlalchemy import create_engine, insert, inspect, select, text  # noqa: E402

from tests.yacht_play.test_hostile_files import one_line_refusal, run_import  # noqa: E402
from tests.yacht_play.test_records import analyze, resume  # noqa: E402
from tests.yacht_play.test_serve_api import TestClient, play_out  # noqa: E402
from tests.yacht_play.test_serve_browser import browser  # noqa: E402,F401  (a fixture: the player page's test)
from yacht_env.rules import YACHT  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.match import Match, Player, Seat, dice_stream  # noqa: E402
from yacht_play.records import write_games  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402

SIXES = [[[6] * 5] * 3] * YACHT.num_turns  # every roll five sixes: no seed deals this


def played_in_order(match: Match, rows: int | None = None) -> Match:
    """``match`` with its rows scored in order on each turn's first roll (``rows`` of them, else all)."""
    for row in range(YACHT.num_rows if rows is None else rows):
        match.play(YACHT.dice.num_rerolls + row)
    return match


def schema_1_lines(match: Match, faces) -> list[dict]:
    """``match``'s record as schema 1 wrote it: the header holds the seat's dice stream ``faces``."""
    lines = [dict(line, schema=1) for line in match.game_record().lines()]
    lines[0]["players"] = [dict(lines[0]["players"][0], faces=np.asarray(faces).tolist())]
    return lines


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def forged_record(path: Path, seed: int | None, seat_seed: int | None = None, finished: bool = True) -> Path:
    """A schema-1 game of mallory's on five sixes at every roll, seeded ``seed`` (header) and ``seat_seed`` (the seat)."""
    match = Match([Seat(0, Player("mallory"), seat_seed, SIXES, YACHT)], "solitaire", seed, YACHT, game_id="forged")
    played_in_order(match, None if finished else 5)
    return write_lines(path, schema_1_lines(match, SIXES))


FORGERIES = {  # (header seed, seat seed) -> what the refusal names
    "seed null": ((None, None), "field 'seed': expected the game's seed (schema 1), got None"),
    "the seat's seed null": ((7, None), "field 'players.0.seed': expected the seed that deals its dice, got None"),
    "faces no seed deals": ((7, 7), "field 'players.0.faces': not the dice seed 7 deals"),
}


@pytest.mark.parametrize("command", ["analyze", "play --resume", "import"])
@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
def test_a_schema_1_record_whose_dice_no_seed_deals_is_refused(tmp_path, capsys, forgery, command):
    (seed, seat_seed), words = FORGERIES[forgery]
    path = forged_record(tmp_path / "forged.jsonl", seed, seat_seed, finished=command != "play --resume")
    before = path.read_bytes()
    if command == "analyze":
        code, out = analyze(path, capsys=capsys)
        one_line_refusal(code, out.err, f"{path}:1: game record, {words}", "dealt again from its seeds" if seed else "")
    elif command == "play --resume":
        code, out = resume(path, capsys)
        one_line_refusal(code, out.err, f"{path}:1: game record, {words}")
    else:
        good = write_lines(tmp_path / "good.jsonl", played_in_order(Match.new([Player("ann")], seed=3)).game_record().lines())
        database = tmp_path / "yacht.db"
        code, err = run_import(good, path, db=database, capsys=capsys)
        one_line_refusal(code, err, f"{path}:1: game record, {words}", "nothing was imported")
        assert db.all_games(db.connect(str(database))) == []  # all or nothing: not the good game either
    assert path.read_bytes() == before


def test_a_schema_1_record_whose_dice_its_seeds_deal_is_read_and_imported(tmp_path, capsys):
    match = played_in_order(Match.new([Player("olga")], seed=11))
    path = write_lines(tmp_path / "old.jsonl", schema_1_lines(match, dice_stream(11)))
    assert analyze(path, capsys=capsys)[0] == 0
    code, err = run_import(path, db=tmp_path / "yacht.db", capsys=capsys)
    assert code == 0 and "1 games added, 0 already in the database (marked imported" in err, err
    (game,) = db.all_games(db.connect(str(tmp_path / "yacht.db")))
    assert game.imported and game.end["totals"] == match.totals


@pytest.fixture(params=["sqlite", "postgresql"])
def new_database(request, tmp_path):
    """A maker of new, empty databases: SQLite files, or databases of their own on the throwaway PostgreSQL server."""
    made = itertools.count()
    if request.param == "sqlite":
        return lambda: str(tmp_path / f"yacht-{next(made)}.db")
    url = request.getfixturevalue("postgres_url")

    def make() -> str:
        name = f"yacht_{uuid.uuid4().hex[:12]}"
        server = create_engine(db.database_url(url), isolation_level="AUTOCOMMIT")
        with server.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {name}"))
        server.dispose()
        return url.rsplit("/", 1)[0] + "/" + name

    return make


@pytest.fixture
def database(new_database) -> str:
    """A new, empty database: an SQLite file, or a database of its own on the throwaway PostgreSQL server."""
    return new_database()


def imported_and_played(database: str, tmp_path: Path, capsys):
    """A database with a game of ann's played on the server and a game of ann's and one of ivan's imported, all
    finished; the service and its client."""
    engine = db.connect(database)
    service = GameService(engine, [])
    client = TestClient(create_app(service))
    secret = client.post("/api/games", json={"name": "ann", "mode": "solitaire"}).json()["secret"]
    play_out(client, service, secret, random.Random(3), check=False)
    records = tmp_path / "records.jsonl"
    write_games(
        records, [played_in_order(Match.new([Player(name)], seed=seed)).game_record() for name, seed in (("ann", 5), ("ivan", 6))]
    )
    code, err = run_import(records, db=database, capsys=capsys)
    assert code == 0 and "2 games added" in err, err
    return service, client


def test_imported_games_are_marked_in_a_player_s_games(database, tmp_path, capsys):
    _, client = imported_and_played(database, tmp_path, capsys)
    history = client.get("/api/players/ann").json()
    assert len(history["games"]) == 2 and history["imported"] == 1
    assert sorted(game["imported"] for game in history["games"]) == [False, True]
    assert client.get("/api/players/ivan").json()["imported"] == 1


def test_the_report_leaves_imported_games_out_unless_asked(database, tmp_path, capsys):
    _, client = imported_and_played(database, tmp_path, capsys)
    report = client.get("/api/report").json()
    assert report["games"] == 1 and report["imported_games_left_out"] == 2
    assert report["filters"]["include_imported"] is False
    assert [p["name"] for p in report["people"]["players"]] == ["ann"]
    included = client.get("/api/report?include_imported=1").json()
    assert included["games"] == 3 and included["imported_games"] == 2 and included["imported_games_left_out"] == 0
    assert included["filters"]["include_imported"] is True
    assert {p["name"] for p in included["people"]["players"]} == {"ann", "ivan"}
    page = client.get("/report").text
    assert "2 imported games left out (?include_imported=1 counts them)" in page
    assert "include_imported=True" in client.get("/report?include_imported=1").text
    bad = client.get("/api/report?include_imported=maybe")
    assert bad.status_code == 400 and bad.json() == {"error": "include_imported must be 1 or 0 (true or false), got 'maybe'"}
    for flag in ("1", "true", "Yes", "TRUE", "0", "false", "No"):  # each spelling, in any case
        counted = flag.lower() in ("1", "true", "yes")
        assert client.get(f"/api/report?include_imported={flag}").json()["games"] == (3 if counted else 1), flag
    capsys.readouterr()
    assert main(["report", "--db", database]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("1 finished game ") and "2 imported games left out" in first
    assert main(["report", "--db", database, "--include-imported"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("3 finished games") and "include_imported=True" in first and "2 imported games counted in" in first


V1_GAME = text(
    "INSERT INTO games (game_id, secret, player, mode, coach, header, created, finished, end_record, score, loss) "
    "VALUES (:game_id, :secret, :player, :mode, :coach, :header, :created, :finished, :end_record, :score, :loss)"
)
V1_DECISION = text("INSERT INTO decisions (game_id, number, record) VALUES (:game_id, :number, :record)")


def version_1_database(url: str, games: list[list[dict]]) -> None:
    """A database as version 1 of the store made it (no ``imported`` column), holding the finished ``games``."""
    engine = create_engine(db.database_url(url))
    with engine.begin() as connection:
        db.schema_version.create(connection)
        connection.execute(insert(db.schema_version).values(version=1))
        db.MIGRATIONS[0](connection)
        for header, *decisions, end in games:
            game_id = header["game_id"]
            connection.execute(
                V1_GAME,
                dict(
                    game_id=game_id,
                    secret=f"secret-{game_id}",
                    player=header["players"][0]["name"],
                    mode=header["mode"],
                    coach=False,
                    header=json.dumps(header),
                    created=header["time"],
                    finished=end["time"],
                    end_record=json.dumps(end),
                    score=end["totals"][0],
                    loss=0.5,
                ),
            )
            for number, record in enumerate(decisions):
                connection.execute(V1_DECISION, dict(game_id=game_id, number=number, record=json.dumps(record)))
    engine.dispose()


def test_an_old_database_is_migrated_and_its_games_no_seed_dealt_are_marked_imported(database, tmp_path, capsys):
    served = played_in_order(Match.new([Player("ann")], seed=21)).game_record().lines()
    old = played_in_order(Match.new([Player("olga")], seed=22))
    forged = Match([Seat(0, Player("mallory"), 7, SIXES, YACHT)], "solitaire", 7, YACHT, game_id="forged")
    version_1_database(database, [served, schema_1_lines(old, dice_stream(22)), schema_1_lines(played_in_order(forged), SIXES)])
    engine = db.connect(database)  # migrates
    with engine.connect() as connection:
        assert connection.execute(select(db.schema_version.c.version)).scalar() == len(db.MIGRATIONS) == 2
    marked = {game.header["players"][0]["name"]: game.imported for game in db.all_games(engine)}
    assert marked == {"ann": False, "olga": False, "mallory": True}
    assert db.migrate(engine) == 2 and {g.imported for g in db.all_games(engine)} == {False, True}  # again: no change
    service = GameService(engine, [])
    with TestClient(create_app(service)) as client:
        assert client.get("/api/players/mallory").json()["games"][0]["imported"] is True
        assert client.get("/game/secret-forged").status_code == 200
        assert client.get("/api/games/secret-forged").json()["finished"] is True  # the server's rows still play back
        report = client.get("/api/report").json()
        assert report["games"] == 2 and report["imported_games_left_out"] == 1


def test_the_player_page_marks_an_imported_game(tmp_path, capsys, request):
    from tests.yacht_play.serve_support import Server

    page = request.getfixturevalue("browser").new_page()  # a skip saying why, where there is no chromium
    server = Server(tmp_path / "yacht.db").start()
    try:
        records = write_lines(tmp_path / "one.jsonl", played_in_order(Match.new([Player("imre")], seed=8)).game_record().lines())
        code, err = run_import(records, db=server.db, capsys=capsys)
        assert code == 0, err
        page.goto(f"{server.url}/player/imre")
        page.wait_for_selector("#history tbody tr")
        assert "1 game (1 imported), 1 finished" in page.inner_text("#stats")
        assert page.inner_text("#history tbody tr td >> nth=1").endswith("solitaire · imported")
    finally:
        page.close()
        server.stop()


def schema(engine) -> dict:
    """Every table of the database as the database itself describes it: columns (type, nullability, server default),
    primary key, unique constraints, indexes and foreign keys."""
    inspector = inspect(engine)
    tables = {}
    for name in sorted(inspector.get_table_names()):
        columns = [(c["name"], str(c["type"]), c["nullable"], c["default"]) for c in inspector.get_columns(name)]
        tables[name] = (
            columns,
            inspector.get_pk_constraint(name)["constrained_columns"],
            sorted(u["column_names"] for u in inspector.get_unique_constraints(name)),
            sorted((i["name"], i["column_names"], bool(i["unique"])) for i in inspector.get_indexes(name)),
            sorted(
                (f["constrained_columns"], f["referred_table"], f["referred_columns"]) for f in inspector.get_foreign_keys(name)
            ),
        )
    return tables


def test_a_new_and_a_migrated_database_hold_exactly_the_declared_tables(new_database):
    """The migrations build the tables the store declares and queries, column for column (a length or a default that
    drifted apart would pass on SQLite's loose types and fail on PostgreSQL), from nothing and from version 1."""
    declared = create_engine(db.database_url(new_database()))
    db.metadata.create_all(declared)
    fresh, old = new_database(), new_database()
    version_1_database(old, [])
    expected = schema(declared)
    assert set(expected) == {"schema_version", "games", "decisions"}
    assert ("finished", "VARCHAR(40)", True, None) in expected["games"][0]
    for url in (fresh, old):
        engine = db.connect(url)
        assert schema(engine) == expected, url
        engine.dispose()
    declared.dispose()


def test_the_migration_marks_every_undealt_game_however_many(database):
    """Games are marked 500 to a statement: 503 undealt games among dealt ones are all marked, and only they."""
    served = played_in_order(Match.new([Player("ann")], seed=21)).game_record().lines()
    forged = Match([Seat(0, Player("mallory"), 7, SIXES, YACHT)], "solitaire", 7, YACHT, game_id="forged")
    undealt = schema_1_lines(played_in_order(forged), SIXES)
    games = []
    for number in range(1_005):
        header, *_, end = undealt if number % 2 == 0 else served
        games.append([dict(header, game_id=f"g{number}"), end])
    version_1_database(database, games)
    engine = db.connect(database)  # migrates
    assert {game.game_id: game.imported for game in db.all_games(engine)} == {f"g{n}": n % 2 == 0 for n in range(1_005)}
    engine.dispose()
