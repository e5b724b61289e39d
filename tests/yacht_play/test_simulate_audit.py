"""``simulate.audit``: a database checked against what the simulated people were told, game by game."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")

from sqlalchemy import func, select  # noqa: E402

from tests.yacht_play.test_serve_api import TestClient  # noqa: E402
from yacht_play import store  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402
from yacht_play.simulate import Chooser, Played, audit, run_sync  # noqa: E402


@pytest.fixture(scope="module")
def one_game(tmp_path_factory):
    """A database holding one finished solitaire game (its file, and an engine on it), and what its player was told."""
    path = tmp_path_factory.mktemp("audit") / "yacht.db"
    service = GameService(store.connect(str(path)), [])
    with TestClient(create_app(service)) as client:
        played = run_sync(client, Chooser(0.0, np.random.default_rng(0)), Played("ann", "solitaire", []))
    assert not played.errors and played.winners == ["ann"]
    service.engine.dispose()  # its connections closed: the file holds every write (no write-ahead log beside it)
    return path, service.engine, played


def test_a_database_that_holds_what_the_player_was_told_counts_nothing_wrong(one_game):
    _, engine, played = one_game
    counts = audit(engine, [played])
    assert counts == {
        "games": 1,
        "finished": 1,
        "decisions": len(played.acknowledged),  # solitaire: every decision is the person's
        "acknowledged": len(played.acknowledged),
        "missing": 0,
        "unacknowledged": 0,
        "doubled_or_gaps": 0,
        "illegal": 0,
    }


def test_each_game_is_checked_whatever_is_wrong_with_the_ones_before_it(one_game):
    """A game never created (no secret) is skipped; one the database lacks counts its acknowledged decisions missing,
    and the games after it are still checked: an acknowledgement the database contradicts is missing, a stored
    decision never acknowledged is unacknowledged."""
    _, engine, played = one_game
    first, second = sorted(played.acknowledged)[:2]
    told = dict(played.acknowledged)
    told[first] = (told[first] + 1) % 100  # the person was told another action than the one stored
    del told[second]  # and never heard of this one
    lost = Played("bob", "solitaire", [], secret="no-such-game", acknowledged={0: 3, 1: 40})
    counts = audit(engine, [Played("eve", "solitaire", []), lost, dataclasses.replace(played, acknowledged=told)])
    assert counts["games"] == counts["finished"] == 1 and counts["decisions"] == len(played.acknowledged)
    assert counts["acknowledged"] == len(told)
    assert counts["missing"] == 2 + 1 and counts["unacknowledged"] == 1
    assert counts["doubled_or_gaps"] == counts["illegal"] == 0


@pytest.mark.parametrize("number", [-1, "gap"])
def test_decisions_numbered_otherwise_than_0_1_2_are_counted(one_game, tmp_path, number):
    """A game's stored decisions must be numbered 0, 1, ... (no two alike: the key forbids it): one numbered below 0,
    or a number skipped, is counted."""
    path, _, played = one_game
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    engine = store.connect(str(copy))
    with engine.begin() as connection:
        game_id = connection.execute(select(store.decisions.c.game_id)).scalars().first()
        last = connection.execute(select(func.max(store.decisions.c.number))).scalar_one()
        renumbered = last + 1 if number == "gap" else number  # the last decision one further, or before the first
        last_decision = (store.decisions.c.game_id == game_id) & (store.decisions.c.number == last)
        connection.execute(store.decisions.update().where(last_decision).values(number=renumbered))
    assert audit(engine, [played])["doubled_or_gaps"] == 1
