"""The store of games: every game and its decisions, in SQLite (the default) or PostgreSQL.

``yacht serve`` and ``yacht import`` write it; ``yacht report``, ``yacht export`` and the simulated people's
audit read it; each stands on this module, none on another.

One schema through SQLAlchemy Core, so both engines run the same statements. A game row holds the
game's header record (:mod:`yacht_play.records`, with the dice stream: never sent to a browser) and
its secret; a decision row holds one decision record, numbered from 0 within its game. A game is
rebuilt by replaying its decisions (``Match.resume``), so the rows are the whole truth: nothing
else is kept between requests that a crash could lose.

The schema is versioned: ``schema_version`` holds the number of migrations applied, and
:func:`migrate` applies the missing ones, in order, on start. A migration is appended to
``MIGRATIONS``, never edited. Version 2 marks the games ``yacht import`` brought in from record files
(``imported``): a server vouches only for the games played on it, so the report leaves the others
out unless asked.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path

from yacht_env.bounded_input import load_json
from yacht_env.echo import MAX_PATH_ECHO, echoed
from yacht_env.extras import needs_extra
from yacht_env.rules import RULE_SETS
from yacht_play.records import GameRecord

with needs_extra("serve"):
    from sqlalchemy import (
        Boolean,
        Column,
        Float,
        ForeignKey,
        Index,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        create_engine,
        event,
        false,
        func,
        insert,
        select,
        text,
        update,
    )
    from sqlalchemy.engine import Engine, make_url
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

metadata = MetaData()

schema_version = Table("schema_version", metadata, Column("version", Integer, nullable=False))

games = Table(
    "games",
    metadata,
    Column("game_id", String(64), primary_key=True),
    Column("secret", String(64), nullable=False, unique=True),
    Column("player", Text, nullable=False),  # the person's name
    Column("mode", String(16), nullable=False),
    Column("coach", Boolean, nullable=False),
    Column("header", Text, nullable=False),  # the game record's header, JSON
    Column("created", String(40), nullable=False),
    Column("finished", String(40)),  # time of the end record; null while the game runs
    Column("end_record", Text),  # the end record, JSON
    Column("score", Integer),  # the person's final total
    Column("loss", Float),  # the person's mean loss per decision against the optimum
    Column("imported", Boolean, nullable=False, default=False, server_default=false()),  # from a record file (v2)
)

decisions = Table(
    "decisions",
    metadata,
    Column("game_id", String(64), ForeignKey("games.game_id"), primary_key=True),
    Column("number", Integer, primary_key=True),  # 0, 1, ... within the game
    Column("record", Text, nullable=False),  # the decision record, JSON
)


Index("games_by_player", games.c.player, games.c.created)


def _create_v1(connection) -> None:
    # The version-1 tables, frozen: the declarations above have changed since (see MIGRATIONS).
    frozen = MetaData()
    v1_games = Table(
        "games",
        frozen,
        Column("game_id", String(64), primary_key=True),
        Column("secret", String(64), nullable=False, unique=True),
        Column("player", Text, nullable=False),
        Column("mode", String(16), nullable=False),
        Column("coach", Boolean, nullable=False),
        Column("header", Text, nullable=False),
        Column("created", String(40), nullable=False),
        Column("finished", String(40)),
        Column("end_record", Text),
        Column("score", Integer),
        Column("loss", Float),
    )
    v1_decisions = Table(
        "decisions",
        frozen,
        Column("game_id", String(64), ForeignKey("games.game_id"), primary_key=True),
        Column("number", Integer, primary_key=True),
        Column("record", Text, nullable=False),
    )
    Index("games_by_player", v1_games.c.player, v1_games.c.created)
    for table in (v1_games, v1_decisions):
        table.create(connection)  # with its indexes


def _add_imported_v2(connection) -> None:
    # Which games came from a record file. Version 1 did not say; a game whose dice no seed deals (a
    # schema-1 header's stream) was never dealt by a server, so it came from a file: those are marked.
    false_literal = "0" if connection.dialect.name == "sqlite" else "FALSE"  # an SQLite older than 3.23 knows no FALSE
    connection.execute(text(f"ALTER TABLE games ADD COLUMN imported BOOLEAN NOT NULL DEFAULT {false_literal}"))
    rows = connection.execute(select(games.c.game_id, games.c.header)).all()
    undealt = [game_id for game_id, header in rows if not _dealt_by_seeds(header)]
    for start in range(0, len(undealt), 500):
        chosen = undealt[start : start + 500]
        connection.execute(update(games).where(games.c.game_id.in_(chosen)).values(imported=True))


def _dealt_by_seeds(header_text: str) -> bool:
    """Whether the dice of a stored header are the ones its seeds deal (always so from record schema 2)."""
    from yacht_play.match import recorded_seat_dice
    from yacht_play.records import RecordError

    try:
        header = load_json(header_text, "a stored game header")
        if header.get("schema") != 1:
            return True
        rules = RULE_SETS[header["rules"]]
        for info in header["players"]:
            recorded_seat_dice(header, info, rules, "a stored game header")
    except (RecordError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


MIGRATIONS = [_create_v1, _add_imported_v2]  # MIGRATIONS[i] takes the schema from version i to i + 1


class DatabaseError(RuntimeError):
    """A database URL that does not work, or a database newer than this version understands."""


def database_url(text: str) -> str:
    """A SQLAlchemy URL from ``--db``: a URL as given, or a file path for SQLite."""
    if "://" in text:
        if text.startswith("postgresql://") or text.startswith("postgres://"):
            return "postgresql+psycopg://" + text.split("://", 1)[1]  # psycopg 3, not the default psycopg2
        return text
    return "sqlite:///" + str(Path(text).expanduser())


# A password sits in a URL as user:PASSWORD@ or as a query parameter (libpq reads ?password= and ?sslpassword=).
_USER_PASSWORD = re.compile(r"(://[^/@:]*:)[^/@]*@")
_QUERY_PASSWORD = re.compile(r"(?i)([?&][^=&#]*password=)[^&#]*")


def missing_database(text: str) -> str | None:
    """Why ``--db`` ``text`` names no database to read, one line (None for a URL, or a file that is there)."""
    if "://" in text:
        return None
    try:
        there = Path(text).expanduser().exists()
    except OSError:  # e.g. a name longer than the system allows
        there = False
    return None if there else f"no database at {echoed(text, MAX_PATH_ECHO)} (yacht serve --db FILE creates it)"


def hidden_password(url: str) -> str:
    """``url`` with each password in it (``user:pw@``, ``?password=``) shown as ``***``: the one masking step."""
    try:
        url = make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # not a URL SQLAlchemy reads: mask whatever sits between ":" and "@"
        url = _USER_PASSWORD.sub(r"\1***@", url)
    return _QUERY_PASSWORD.sub(r"\1***", url)


def shown_url(url: str) -> str:
    """``url`` as every message about a database shows it: passwords hidden (:func:`hidden_password`), quoted,
    control characters escaped and cut to a line (:func:`yacht_env.echo.echoed`).
    """
    return echoed(hidden_password(url), MAX_PATH_ECHO)


def _passwords(url: str) -> list[str]:
    """The passwords written in ``url``, as its parts hold them (decoded), and as written."""
    found = [match.group(0).split("=", 1)[1] for match in _QUERY_PASSWORD.finditer(url)]
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return [secret for secret in found if secret]
    found.append(str(parsed.password or ""))
    for key, value in parsed.query.items():
        if "password" in key.lower():
            found += [value] if isinstance(value, str) else list(value)
    return [secret for secret in found if secret]


def _without_password(message: str, url: str) -> str:
    message = message.replace(url, hidden_password(url))
    for secret in _passwords(url):
        message = message.replace(secret, "***")
    return message


@contextmanager
def database_errors(url: str, doing: str = "read"):
    """Turn a database's failure inside the block into one :class:`DatabaseError` line naming ``url`` (its password
    hidden): a file that is not SQLite, a corrupted one, a server that went away.
    """
    try:
        yield
    except DatabaseError as error:
        raise DatabaseError(_without_password(str(error), url)) from None
    except (SQLAlchemyError, ImportError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DatabaseError(_without_password(f"cannot {doing} database {shown_url(url)}: {first}", url)) from None


def in_memory(url: str) -> bool:
    """Whether ``url`` is an SQLite database in memory, which every connection would see empty."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return False
    database = parsed.database or ""
    return parsed.get_backend_name() == "sqlite" and (
        database in ("", ":memory:") or database.startswith("file::memory:") or "memory" in str(parsed.query.get("mode", ""))
    )


def connect(url: str) -> Engine:
    """An engine on ``url`` (a URL or an SQLite file path), with the schema migrated to the newest version;
    else :class:`DatabaseError` with one line (the URL's password hidden).
    """
    url = database_url(url)
    try:
        make_url(url)
    except (ArgumentError, ValueError):  # e.g. "postgresql://[::1", whose port SQLAlchemy reads as ":1"
        raise DatabaseError(
            f"database URL {shown_url(url)} cannot be read: give an SQLite file path or a URL such as "
            "postgresql://user:password@host:5432/dbname"
        ) from None
    if in_memory(url):
        raise DatabaseError(
            f"database {shown_url(url)} is in memory: each connection would see its own empty one and every game would be "
            "lost; name an SQLite file or a PostgreSQL URL"
        )
    with database_errors(url, "open"):
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True)
        migrate(engine)
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL: readers never block the writer; synchronous=FULL: a commit is on disk when it returns,
    # so a decision acknowledged to a browser survives a kill or a power cut.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def migrate(engine: Engine) -> int:
    """Apply the migrations this database lacks; return the schema version."""
    with engine.begin() as connection:
        schema_version.create(connection, checkfirst=True)
        version = connection.execute(select(schema_version.c.version)).scalar()
        if version is None:
            connection.execute(insert(schema_version).values(version=0))
            version = 0
        if not isinstance(version, int) or version < 0:  # SQLite keeps any value in an INTEGER column
            raise DatabaseError(
                f"the database's schema_version holds {str(version)[:40]!r}, not a version number (0..{len(MIGRATIONS)}); "
                "is it a yacht database?"
            )
        if version > len(MIGRATIONS):
            raise DatabaseError(
                f"the database has schema version {version}, newer than this version reads ({len(MIGRATIONS)}); upgrade yacht-rl"
            )
        for step in MIGRATIONS[version:]:
            step(connection)
        connection.execute(update(schema_version).values(version=len(MIGRATIONS)))
    return len(MIGRATIONS)


# -- reading and writing games -----------------------------------------------------------------


class GroupCommit:
    """One writer thread per engine that commits the writes of every request waiting, together.

    A request hands its write (a function of a connection) to :meth:`write` and waits; the writer
    thread takes every write queued, runs them in one transaction, commits once, and only then
    releases their requests. So N decisions arriving together cost one commit (on SQLite, one
    fsync with ``synchronous=FULL``) instead of N in a row, and a decision is still acknowledged
    only after the commit that holds it returned. When a batch fails (a second writer of the same
    decision number, a full disk), it is rolled back and its writes are retried one transaction
    each, so a write fails alone and never takes its neighbours with it.

    SQLite has one writer at a time anyway; PostgreSQL gains the same single flush per batch. The
    thread starts on the first write and ends after ``IDLE_SECONDS`` without one.
    """

    IDLE_SECONDS = 5.0
    MAX_BATCH = 500

    def __init__(self, engine: Engine):
        self.engine = engine
        self._queue: list[_Write] = []
        self._wake = threading.Condition()
        self._running = False

    def write(self, work) -> None:
        """Run ``work(connection)`` in a committed transaction; return once it is committed (else raise its error)."""
        item = _Write(work)
        with self._wake:
            self._queue.append(item)
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="yacht-group-commit", daemon=True).start()
            self._wake.notify()
        item.done.wait()
        if item.error is not None:
            raise item.error

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._queue:
                    self._wake.wait(self.IDLE_SECONDS)
                if not self._queue:
                    self._running = False
                    return
                batch, self._queue = self._queue[: self.MAX_BATCH], self._queue[self.MAX_BATCH :]
            self._commit(batch)

    def _commit(self, batch: list[_Write]) -> None:
        try:
            try:
                with self.engine.begin() as connection:
                    for item in batch:
                        item.work(connection)
            except Exception as error:
                if len(batch) == 1:
                    batch[0].error = error
                    return
                for item in batch:  # alone, so that only the faulty write fails
                    try:
                        with self.engine.begin() as connection:
                            item.work(connection)
                    except Exception as error:
                        item.error = error
        except BaseException as error:  # no request may wait for ever, and the thread must go on
            for item in batch:
                item.error = item.error or RuntimeError(f"the database write failed: {error!r}")
        finally:
            for item in batch:
                item.done.set()


class _Write:
    __slots__ = ("work", "done", "error")

    def __init__(self, work):
        self.work = work
        self.done = threading.Event()
        self.error: BaseException | None = None


_committers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_committers_guard = threading.Lock()


_held = threading.local()  # the writes an all_or_nothing block of this thread holds back: (engine, [work, ...])


@contextmanager
def all_or_nothing(engine: Engine):
    """Every write this thread makes on ``engine`` inside the block, committed together in one transaction at its end.

    A block that raises commits none of them, and a write that fails at the end takes the others with
    it: ``yacht import`` adds every game of every file given, or none.
    """
    works: list = []
    _held.writes = (engine, works)
    try:
        yield
    finally:
        _held.writes = None
    with engine.begin() as connection:
        for work in works:
            work(connection)


def committed(engine: Engine, work) -> None:
    """Run ``work(connection)`` through the engine's :class:`GroupCommit`; return once it is committed.

    Inside :func:`all_or_nothing` on this engine the write is held instead, and committed with the others at its end.
    """
    held = getattr(_held, "writes", None)
    if held is not None and held[0] is engine:
        held[1].append(work)
        return
    with _committers_guard:
        committer = _committers.get(engine)
        if committer is None:
            committer = _committers[engine] = GroupCommit(engine)
    committer.write(work)


def insert_game(
    engine: Engine,
    game_id: str,
    secret: str,
    player: str,
    header: dict,
    records: list[dict] = (),
    end: dict | None = None,
    score: int | None = None,
    loss: float | None = None,
    imported: bool = False,
) -> None:
    """A new game with its header (and, for imported games, its decisions and end), in one transaction.

    ``imported``: the game comes from a record file (``yacht import``), not from play on this server.
    """
    game = dict(
        game_id=game_id,
        secret=secret,
        player=player,
        mode=header["mode"],
        coach=bool(header.get("coach")),
        header=json.dumps(header),
        created=header["time"],
        finished=end["time"] if end else None,
        end_record=json.dumps(end) if end else None,
        score=score,
        loss=loss,
        imported=imported,
    )
    rows = [{"game_id": game_id, "number": n, "record": json.dumps(r)} for n, r in enumerate(records)]

    def work(connection) -> None:
        connection.execute(insert(games).values(**game))
        if rows:
            connection.execute(insert(decisions), rows)

    committed(engine, work)


def append_decisions(
    engine: Engine,
    game_id: str,
    first_number: int,
    records: list[dict],
    end: dict | None = None,
    score: int | None = None,
    loss: float | None = None,
) -> None:
    """Commit decisions numbered from ``first_number`` (and the end, if the game ended), in one transaction.

    The primary key (game, number) makes a second writer of the same number fail instead of forking the game.
    """
    rows = [{"game_id": game_id, "number": first_number + i, "record": json.dumps(r)} for i, r in enumerate(records)]
    ended = None if end is None else dict(finished=end["time"], end_record=json.dumps(end), score=score, loss=loss)

    def work(connection) -> None:
        connection.execute(insert(decisions), rows)
        if ended is not None:
            connection.execute(update(games).where(games.c.game_id == game_id).values(**ended))

    committed(engine, work)


def game_row(engine: Engine, secret: str):
    """The game row with this secret, or None."""
    with engine.connect() as connection:
        return connection.execute(select(games).where(games.c.secret == secret)).first()


def game_row_by_id(engine: Engine, game_id: str):
    """The game row with this id, or None."""
    with engine.connect() as connection:
        return connection.execute(select(games).where(games.c.game_id == game_id)).first()


def load_record(engine: Engine, row) -> GameRecord:
    """The game record of a game row: header, decisions in order, end."""
    with engine.connect() as connection:
        found = connection.execute(
            select(decisions.c.record).where(decisions.c.game_id == row.game_id).order_by(decisions.c.number)
        ).scalars()
        where = f"game {row.game_id} in the database"
        records = [load_json(text, where) for text in found]
    end = load_json(row.end_record, where) if row.end_record else None
    return GameRecord(load_json(row.header, where), records, end, imported=bool(row.imported))


def all_games(engine: Engine, finished_only: bool = False) -> list[GameRecord]:
    """Every game as a record, oldest first."""
    with engine.connect() as connection:
        query = select(games).order_by(games.c.created, games.c.game_id)
        if finished_only:
            query = query.where(games.c.finished.is_not(None))
        rows = connection.execute(query).all()
    return [load_record(engine, row) for row in rows]


def player_games(engine: Engine, player: str, limit: int = 200) -> list:
    """A person's game rows, newest first."""
    with engine.connect() as connection:
        return connection.execute(
            select(
                games.c.game_id,
                games.c.mode,
                games.c.coach,
                games.c.header,
                games.c.created,
                games.c.finished,
                games.c.end_record,
                games.c.score,
                games.c.loss,
                games.c.secret,
                games.c.imported,
            )
            .where(games.c.player == player)
            .order_by(games.c.created.desc())
            .limit(limit)
        ).all()


def count_decisions(engine: Engine) -> int:
    """The number of decisions stored, over all games."""
    with engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(decisions)).scalar()


def count_finished(engine: Engine) -> int:
    """The number of finished games. A finished game is never changed or removed, so while this number stays the
    same, so does the set of finished games (what a report is built from).
    """
    with engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(games).where(games.c.finished.is_not(None))).scalar()
