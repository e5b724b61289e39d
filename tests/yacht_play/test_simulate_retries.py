"""The simulated people's one retry policy, through both drivers: a request without an answer (a transport error,
a 5xx) is sent again with the same body until it is answered, or given up after ``RETRY_SECONDS`` with an error."""

from __future__ import annotations

import asyncio
import itertools
from types import SimpleNamespace

import pytest

httpx = pytest.importorskip("httpx", reason="the simulated people need httpx")

from yacht_play import simulate  # noqa: E402
from yacht_play.simulate import Played  # noqa: E402


class Answer:
    def __init__(self, status: int, body: dict):
        self.status_code, self.body, self.headers = status, body, {}

    def json(self) -> dict:
        return self.body


class Flaky:
    """A client that gives its answers in order: an exception is raised, an ``Answer`` returned."""

    def __init__(self, answers):
        self.answers = iter(answers)
        self.sent = []

    def request(self, method, path, json=None):
        self.sent.append((method, path, json))
        answer = next(self.answers)
        if isinstance(answer, Exception):
            raise answer
        return answer


class FlakyAsync(Flaky):
    async def request(self, method, path, json=None):
        return Flaky.request(self, method, path, json)


def one_request_game(seen: list):
    def game(chooser, played, coach):
        status, body = yield "POST", "/api/games", {"name": "ann"}
        seen.append((status, body))

    return game


def drive(driver: str, client, played: Played) -> Played:
    if driver == "sync":
        return simulate.run_sync(client, None, played)
    return asyncio.run(simulate.run_async(client, None, played))


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_request_is_sent_again_with_the_same_body_until_it_is_answered(driver, monkeypatch):
    seen = []
    monkeypatch.setattr(simulate, "play_game", one_request_game(seen))
    client = (Flaky if driver == "sync" else FlakyAsync)(
        [httpx.ConnectError("refused"), Answer(503, {"error": "restarting"}), Answer(201, {"secret": "s"})]
    )
    played = drive(driver, client, Played("ann", "solitaire", []))
    assert played.retries == 2 and played.errors == []
    assert client.sent == [("POST", "/api/games", {"name": "ann"})] * 3
    assert seen == [(201, {"secret": "s"})]  # the game hears the answer, once


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_request_never_answered_is_given_up_with_an_error(driver, monkeypatch):
    seen = []
    monkeypatch.setattr(simulate, "play_game", one_request_game(seen))
    monkeypatch.setattr(simulate, "RETRY_SECONDS", 0.2)
    client = (Flaky if driver == "sync" else FlakyAsync)(httpx.ConnectError("refused") for _ in itertools.count())
    played = drive(driver, client, Played("ann", "solitaire", []))
    assert played.errors == ["POST /api/games: no answer within 0 s"] and played.retries >= 2
    assert seen == []


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("coach", [None, False, True])
def test_a_game_asks_for_the_coach_only_when_told(driver, coach):
    """Both drivers create the game with the coach off unless asked for it (the coach's hints are extra work)."""
    client = (Flaky if driver == "sync" else FlakyAsync)([Answer(400, {"error": "stop here"})])
    played = Played("ann", "solitaire", [])
    chooser = SimpleNamespace(requested=None)
    asked = {} if coach is None else {"coach": coach}
    if driver == "sync":
        simulate.run_sync(client, chooser, played, **asked)
    else:
        asyncio.run(simulate.run_async(client, chooser, played, **asked))
    (sent,) = client.sent
    assert sent[:2] == ("POST", "/api/games") and sent[2]["coach"] is bool(coach)
