"""Group commit: the writes of requests waiting together share one commit, and one bad write fails alone."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("sqlalchemy", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")

from sqlalchemy import event, insert, select  # noqa: E402
from sqlalchemy.exc import IntegrityError  # noqa: E402

from yacht_play import store as db  # noqa: E402


def header(game_id: str) -> dict:
    return {"game_id": game_id, "mode": "solitaire", "coach": False, "time": "2026-01-01T00:00:00+00:00"}


def count_commits(engine) -> list[int]:
    commits = [0]
    event.listen(engine, "commit", lambda connection: commits.__setitem__(0, commits[0] + 1))
    return commits


def wait_for_queue(committer: db.GroupCommit, length: int) -> None:
    deadline = time.monotonic() + 30
    while len(committer._queue) < length:
        assert time.monotonic() < deadline, f"{len(committer._queue)} writes queued, expected {length}"
        time.sleep(0.01)


def stored(engine, game_id: str) -> list[int]:
    with engine.connect() as connection:
        return list(
            connection.execute(
                select(db.decisions.c.number).where(db.decisions.c.game_id == game_id).order_by(db.decisions.c.number)
            ).scalars()
        )


def test_writes_waiting_together_share_one_commit_and_each_returns_after_it(tmp_path):
    engine = db.connect(str(tmp_path / "g.db"))
    db.insert_game(engine, "g", "s", "ann", header("g"))
    committer = db._committers[engine]
    commits = count_commits(engine)
    gate, started = threading.Event(), threading.Event()
    returned = []

    def slow(connection):  # holds the writer, so that the next writes queue behind it
        started.set()
        gate.wait(30)

    first = threading.Thread(target=db.committed, args=(engine, slow))
    first.start()
    assert started.wait(30)
    writers = [
        threading.Thread(target=lambda n=n: (db.append_decisions(engine, "g", n, [{"n": n}]), returned.append(n)))
        for n in range(20)
    ]
    for w in writers:
        w.start()
    wait_for_queue(committer, 20)
    assert returned == []  # nothing is acknowledged before its commit
    gate.set()
    for w in [first, *writers]:
        w.join(30)
    assert sorted(returned) == list(range(20))
    assert stored(engine, "g") == list(range(20))
    assert commits[0] == 2  # the slow write's commit, then one for all twenty


def test_a_bad_write_in_a_batch_fails_alone(tmp_path):
    engine = db.connect(str(tmp_path / "g.db"))
    db.insert_game(engine, "g", "s", "ann", header("g"))
    db.append_decisions(engine, "g", 0, [{"n": 0}])
    committer = db._committers[engine]
    gate, started = threading.Event(), threading.Event()
    errors: dict[int, BaseException | None] = {}

    def append(n: int) -> None:
        try:
            db.append_decisions(engine, "g", n, [{"n": n}])
            errors[n] = None
        except Exception as error:
            errors[n] = error

    blocker = threading.Thread(target=db.committed, args=(engine, lambda connection: (started.set(), gate.wait(30))))
    blocker.start()
    assert started.wait(30)
    threads = [threading.Thread(target=append, args=(n,)) for n in (1, 0, 2)]  # 0 is stored already
    for t in threads:
        t.start()
    wait_for_queue(committer, 3)
    gate.set()
    for t in [blocker, *threads]:
        t.join(30)
    assert errors[1] is None and errors[2] is None
    assert isinstance(errors[0], IntegrityError)
    assert stored(engine, "g") == [0, 1, 2]


def test_an_error_reaches_the_caller_and_the_writer_goes_on(tmp_path):
    engine = db.connect(str(tmp_path / "g.db"))
    commits, tries = count_commits(engine), []

    def broken(connection):
        tries.append(1)
        connection.execute(insert(db.decisions).values(game_id="nope", number=0, record="{}"))  # no such game

    with pytest.raises(IntegrityError):
        db.committed(engine, broken)
    assert len(tries) == 1 and commits == [0]  # a write alone in its batch is not tried again alone
    db.insert_game(engine, "g", "s", "ann", header("g"))
    assert db.game_row(engine, "s").player == "ann"


def test_a_write_stopped_by_what_is_no_exception_fails_its_caller_and_the_writer_goes_on(tmp_path):
    # a BaseException that is no Exception (as KeyboardInterrupt and SystemExit are not): the write was not committed,
    # so its caller must not return as if it had been
    class Stopped(BaseException):
        pass

    engine = db.connect(str(tmp_path / "g.db"))
    db.insert_game(engine, "g", "s", "ann", header("g"))

    def stopped(connection):
        connection.execute(insert(db.decisions).values(game_id="g", number=0, record="{}"))
        raise Stopped()

    with pytest.raises(RuntimeError, match=r"^the database write failed: Stopped\(\)$"):
        db.committed(engine, stopped)
    assert stored(engine, "g") == []  # rolled back
    db.committed(engine, lambda connection: connection.execute(insert(db.decisions).values(game_id="g", number=0, record="{}")))
    assert stored(engine, "g") == [0]
