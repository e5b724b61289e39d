"""A player who pokes at ``yacht serve``: floods, odd bodies, odd names, guessed secrets, stale and
out-of-turn actions. Each gets a 4xx with one line, and nothing stored changes."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from dataclasses import astuple
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

from tests.yacht_play.serve_support import ROOT, Server  # noqa: E402
from tests.yacht_play.test_serve_api import TestClient, new_game, play_out, stored  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.report.filters import Filters  # noqa: E402
from yacht_play.serve import app as app_module  # noqa: E402
from yacht_play.serve.app import MAX_BODY, RateLimit, Reports, create_app, parsed_json  # noqa: E402
from yacht_play.serve.games import MAX_NAME, GameService, Refused, lobby_names_of  # noqa: E402


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    engine = db.connect(str(tmp_path_factory.mktemp("abuse") / "yacht.db"))
    return GameService(engine, ["greedy", "optimal"])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        yield client


def one_line(response, status, words):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert words in error and "\n" not in error and "Traceback" not in error
    return error


def test_a_flood_of_new_games_gets_429_per_address(service):
    with TestClient(create_app(service, new_games_per_minute=3)) as limited:
        before = len(db.all_games(service.engine))
        for _ in range(3):
            new_game(limited, name="flood")
        error = one_line(limited.post("/api/games", json={"name": "flood", "mode": "solitaire"}), 429, "at most 3 a minute")
        assert "try again in" in error
        assert len(db.all_games(service.engine)) == before + 3  # the refused one stored nothing
        assert limited.get("/api/agents").status_code == 200  # only creation is limited
    limit = RateLimit(2)
    limit.check("10.0.0.1")
    limit.check("10.0.0.1")
    with pytest.raises(Refused) as refused:
        limit.check("10.0.0.1")
    assert refused.value.status == 429
    limit.check("10.0.0.2")  # another address has its own count
    RateLimit(0).check("x")  # 0: no limit
    with pytest.raises(ValueError, match="-1"):
        RateLimit(-1)


class Clock:
    """``time`` for the rate limit: a monotonic clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_the_rate_limit_counts_the_last_60_seconds_and_says_how_long_to_wait(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(app_module, "time", clock)
    limit = RateLimit(2)
    for at in (1000.0, 1001.0):
        clock.now = at
        limit.check("10.0.0.1")
    clock.now = 1030.0
    with pytest.raises(Refused, match=r"at most 2 a minute; try again in 30 s$"):
        limit.check("10.0.0.1")
    clock.now = 1060.0  # the first game is 60 s old: out of the window
    limit.check("10.0.0.1")
    clock.now = 1060.5
    with pytest.raises(Refused, match=r"try again in 0 s$"):  # the second is 59.5 s old
        limit.check("10.0.0.1")
    clock.now = 1061.0
    limit.check("10.0.0.1")


def test_the_rate_limit_forgets_addresses_quiet_for_a_minute_once_it_holds_more_than_10000(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(app_module, "time", clock)
    limit = RateLimit(1)
    limit.check("quiet")
    clock.now += 60
    limit.check("soon")  # under the bound nothing is forgotten (no walk over the addresses on every check)
    assert sorted(limit._times) == ["quiet", "soon"]
    for address in range(9_997):
        limit.check(f"quiet{address}")
    clock.now += 60
    limit.check("busy")  # 10,000 addresses: all kept
    assert len(limit._times) == 10_000
    limit.check("late")  # 10,001: the 9,999 quiet for 60 s are forgotten
    assert sorted(limit._times) == ["busy", "late"]
    with pytest.raises(Refused):
        limit.check("busy")  # an address still in its minute keeps its count


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan")])
def test_a_body_timeout_must_be_a_number_of_seconds_above_0(service, timeout):
    with pytest.raises(ValueError, match=f"^the body timeout must be a number of seconds above 0, got {timeout!r}$"):
        create_app(service, body_timeout=timeout)


def read_body(body: bytes, content_type: str = "application/json", length: str | None = "own"):
    """``parsed_json`` on ``body`` in 1,000-byte chunks, with a Content-Length of its own size unless given."""
    import asyncio

    async def chunks():
        for start in range(0, len(body), 1000):
            yield body[start : start + 1000]

    headers = {"content-type": content_type} | (
        {} if length is None else {"content-length": str(len(body)) if length == "own" else length}
    )
    return asyncio.run(parsed_json(headers, chunks()))


def padded(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    return b'{"pad": "' + b"x" * (size - 11) + b'"}'


def test_a_body_may_have_exactly_max_body_bytes_and_one_more_is_413_with_or_without_its_length():
    assert read_body(padded(MAX_BODY)) == {"pad": "x" * (MAX_BODY - 11)}
    assert read_body(padded(MAX_BODY), length=None) == {"pad": "x" * (MAX_BODY - 11)}
    for length in ("own", None, "99999999", "abc", "-1", "1" * 19):
        body = padded(MAX_BODY + 1) if length in ("own", None) else b"{}"
        with pytest.raises(Refused) as refused:
            read_body(body, length=length)
        assert (refused.value.status, str(refused.value)) == (413, f"request body over {MAX_BODY} bytes")


@pytest.mark.parametrize(
    ("body", "content_type", "status", "error"),
    [
        (b"{}", "text/plain", 415, "send the request body as JSON (Content-Type: application/json)"),
        (b"{}", "application/jsonx", 415, "send the request body as JSON (Content-Type: application/json)"),
        (b"{", "application/json", 400, "the request body is not valid JSON"),
        (b"[" * 8000 + b"]" * 8000, "application/json", 400, "the request body nests too deeply"),
    ],
)
def test_a_body_not_sent_as_json_or_not_json_is_refused_saying_which(body, content_type, status, error):
    with pytest.raises(Refused) as refused:
        read_body(body, content_type)
    assert (refused.value.status, str(refused.value)) == (status, error)
    for sent_as_json in ("application/json; charset=utf-8", "application/json ; charset=utf-8"):  # parameters after it
        assert read_body(b'{"a": 1}', sent_as_json) == {"a": 1}


def test_the_reports_kept_are_the_last_16_asked_for(service):
    reports = Reports(service)
    games = reports.finished_games()
    asked = [Filters(player=f"p{number}") for number in range(Reports.KEEP + 1)]
    first = reports.report(games, asked[0])
    for filters in asked[1:-1]:
        reports.report(games, filters)
    assert reports.report(games, asked[0]) is first  # kept, and now the last asked for
    reports.report(games, asked[-1])  # the 17th: the one asked for longest ago goes
    assert list(reports.reports) == [astuple(filters) for filters in [*asked[2:-1], asked[0], asked[-1]]]


@pytest.mark.parametrize(
    "content, headers, status, words",
    [
        (b"[" * 8000 + b"]" * 8000, {}, 400, "nests too deeply"),
        (b'{"name": "x", "mode": "solitaire"', {}, 400, "not valid JSON"),
        (b"\xff\xfe\x00garbage", {}, 400, "not valid JSON"),
        (b"", {}, 400, "not valid JSON"),
        (b"null", {}, 400, "JSON object"),
        (b'"a string"', {}, 400, "JSON object"),
        (b'{"name": "x", "mode": "solitaire", "pad": "' + b"y" * MAX_BODY + b'"}', {}, 413, "bytes"),
        (b"{}", {"content-length": "99999999"}, 413, "bytes"),
        (b'{"name": "x"}', {"content-type": "text/plain"}, 415, "JSON"),
        (b'{"name": 12, "mode": "solitaire"}', {}, 400, "name"),
        (b'{"name": "x", "mode": ["solitaire"]}', {}, 400, "not offered"),
        (b'{"name": "x", "mode": "table", "agents": "optimal"}', {}, 400, "list of agent names"),
    ],
)
def test_malformed_and_oversized_bodies_get_a_clear_4xx(client, service, content, headers, status, words):
    before = len(db.all_games(service.engine))
    response = client.post("/api/games", content=content, headers={"content-type": "application/json", **headers})
    one_line(response, status, words)
    assert len(db.all_games(service.engine)) == before


def test_an_oversized_body_without_a_length_is_cut_off(client):
    def chunks():
        for _ in range(64):
            yield b"x" * 1024

    secret = new_game(client, name="chunks")
    response = client.post(f"/api/games/{secret}/actions", content=chunks(), headers={"content-type": "application/json"})
    one_line(response, 413, "bytes")


@pytest.mark.parametrize(
    "name",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "Robert'); DROP TABLE games;--",
        '" OR 1=1 --',
        "名前" * 20,  # 40 characters, 120 bytes
        "👩‍👩‍👧‍👦" * 5,  # family emoji: 7 code points each, 35 in all
        "a\u0301" * 20,  # combining accents
        "{{7*7}}${7*7}",  # (a "%" in a name is decoded twice by the TestClient, once by uvicorn)
    ],
)
def test_odd_names_are_stored_as_given_and_answered_as_data(client, service, name):
    secret = new_game(client, name=name)
    assert client.get(f"/api/games/{secret}").json()["game"]["players"][0]["name"] == name
    assert db.game_row(service.engine, secret).player == name
    assert stored(service, secret).players[0]["name"] == name
    games = client.get(f"/api/players/{quote(name, safe='')}").json()["games"]
    assert games and all(g["mode"] == "solitaire" for g in games)
    with sqlite3.connect(service.engine.url.database) as connection:  # the tables are all still there
        tables = {row[0] for row in connection.execute("select name from sqlite_master where type='table'")}
    assert {"games", "decisions", "schema_version"} <= tables


def test_a_name_over_the_limit_in_characters_is_refused(client):
    one_line(client.post("/api/games", json={"name": "名" * (MAX_NAME + 1), "mode": "solitaire"}), 400, "too long")
    one_line(client.post("/api/games", json={"name": " \u3000\t ", "mode": "solitaire"}), 400, "name")


@pytest.mark.parametrize("name", ["x" * (MAX_NAME + 1), "名" * (MAX_NAME + 1)])
def test_a_history_asked_for_a_name_over_the_limit_is_refused_in_one_line(client, name):
    error = one_line(client.get(f"/api/players/{quote(name, safe='')}"), 400, "name")
    assert error == f"name: {MAX_NAME + 1} characters is too long; at most {MAX_NAME}"


def test_a_history_reads_a_name_as_a_game_start_does_spaces_collapsed_before_its_length_is_counted(client):
    spaced = "ann" + " " * MAX_NAME + "lee"  # over the limit as typed, "ann lee" once its spaces are collapsed
    new_game(client, name=spaced)
    games = client.get(f"/api/players/{quote(spaced, safe='')}").json()["games"]
    assert len(games) == 1
    assert len(client.get("/api/players/ann%20lee").json()["games"]) == 1


def test_guessed_secrets_find_nothing(client, service):
    secret = new_game(client, name="owner")
    response = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": "choice"})
    assert response.status_code == 200, response.text
    for guess in [
        secret.upper() if secret.upper() != secret else secret.lower(),
        secret + "A",
        secret[1:],
        "%2e%2e",
        "' OR '1'='1",
        "0" * 32,
    ]:
        for method, path in [
            ("GET", f"/api/games/{guess}"),
            ("POST", f"/api/games/{guess}/actions"),
            ("GET", f"/api/games/{guess}/summary"),
        ]:
            response = client.request(method, path, json={"seq": 1, "row": "ones"} if method == "POST" else None)
            assert response.status_code == 404, (guess, path, response.text)
            assert "owner" not in response.text
    assert len(stored(service, secret).decisions) == 1


def test_replaying_an_old_action_changes_nothing(client, service):
    secret = new_game(client, name="replayer")
    first = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0]}).json()
    client.post(f"/api/games/{secret}/actions", json={"seq": first["seq"], "row": "choice"})
    before = stored(service, secret).decisions
    same = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0]})  # the same old request
    assert same.status_code == 200 and same.json()["replayed"] and same.json()["seq"] == 2
    one_line(client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [1]}), 409, "reload")
    one_line(client.post(f"/api/games/{secret}/actions", json={"seq": 1, "row": "ones"}), 409, "reload")
    assert stored(service, secret).decisions == before


def test_acting_out_of_turn_is_refused(client, service):
    secret = new_game(client, "table", ["greedy"], name="impatient")
    live = service.live(secret)
    with live.lock:  # the person scores, and the server stops before the agent's turn (as a crash would)
        record = live.match.play(live.match.current.legal_mask().nonzero()[0][-1].item())
        service._commit(live, 0, [record])
    service.forget(live)
    one_line(client.post(f"/api/games/{secret}/actions", json={"seq": 1, "row": "ones"}), 409, "greedy's turn")
    assert len(stored(service, secret).decisions) == 1
    view = client.get(f"/api/games/{secret}").json()  # the agent's owed moves are made on the next look
    assert view["current"]["kind"] == "human" and view["seq"] > 1


def test_acting_in_a_finished_game_is_refused(client, service):
    import random

    from tests.yacht_play.test_serve_api import play_out

    secret = new_game(client, name="finisher")
    done = play_out(client, service, secret, random.Random(5), check=False)
    before = stored(service, secret)
    for body in [{"seq": done["seq"], "row": "ones"}, {"seq": done["seq"], "action": 0}, {"seq": done["seq"], "hold": []}]:
        one_line(client.post(f"/api/games/{secret}/actions", json=body), 409, "over")
    one_line(client.post(f"/api/games/{secret}/actions", json={"seq": done["seq"] + 5, "row": "ones"}), 409, "reload")
    after = stored(service, secret)
    assert after.decisions == before.decisions and after.end == before.end


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_client(request, tmp_path):
    """A client of a server on SQLite, then on PostgreSQL: the hostile set must answer the same on both."""
    url = str(tmp_path / "yacht.db") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    service = GameService(db.connect(url), ["greedy"])
    with TestClient(create_app(service)) as client:
        yield client, service
    service.engine.dispose()


def post_ascii(client, path, body):
    """POST ``body`` as JSON with \\u escapes, as a browser may send a lone surrogate (httpx's own encoder refuses it)."""
    return client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})


HOSTILE_NAMES = [
    "a\ud800b",
    "\udfff",
    "a\x00b",
    "evil\u202etxt.exe",  # a right-to-left override: shows as "evilexe.txt"
    "a\x1b]0;owned\x07b",
    "\x7f",
    "a\x9b2Jb",
]  # \x85 and \x1c..\x1f are white space: collapsed to a space


def test_the_hostile_set_answers_4xx_with_one_line_on_both_databases(any_store_client):
    client, service = any_store_client
    secret = new_game(client, name="owner")
    before = len(db.all_games(service.engine))
    for name in HOSTILE_NAMES:
        response = post_ascii(client, "/api/games", {"name": name, "mode": "solitaire"})
        one_line(response, 400, "name")
    for path in ["/api/players/a%00b", "/api/players/%00", "/api/games/a%00b", "/api/games/a%00b/summary", "/player/a%00b"]:
        response = client.get(path)
        assert response.status_code in (200, 400, 404), (path, response.text)  # /player/NAME is a static page
        if response.status_code != 200:
            one_line(response, response.status_code, "")
    one_line(client.post("/api/games/a%00b/actions", json={"seq": 0, "row": "choice"}), 404, "no such game")
    for since in ["²", "٣", "1" * 5000, "-1", "1e3", " 1"]:
        one_line(client.get(f"/api/games/{secret}", params={"since": since}), 400, "since must be a number")
    for body in [{"seq": 0, "row": "a\ud800"}, {"seq": 0, "row": "a\x00"}, {"seq": 0, "hold": ["\ud800"]}]:
        one_line(post_ascii(client, f"/api/games/{secret}/actions", body), 400, "")
    one_line(post_ascii(client, "/api/games", {"name": "x", "mode": "\ud800"}), 400, "not offered")
    one_line(client.post("/api/games", json={"name": "x", "mode": "solitaire", "rules": "y\x00"}), 400, "rule set")
    one_line(client.get("/api/report", params={"player": "a\x00b", "since": "\x00"}), 400, "since")
    assert client.get("/api/report", params={"player": "a\x00b"}).status_code == 200
    assert len(db.all_games(service.engine)) == before
    assert client.get(f"/api/games/{secret}").status_code == 200


def new_games_from(server: Server, forwarded_for: list[str]) -> list[int]:
    """The statuses of one new game asked for with each ``X-Forwarded-For`` value."""
    import httpx

    return [
        httpx.post(
            server.url + "/api/games", json={"name": "xff", "mode": "solitaire"}, headers={"x-forwarded-for": f}
        ).status_code
        for f in forwarded_for
    ]


@pytest.mark.parametrize(
    "proxies, statuses", [((), [201, 201, 429, 429]), (("--forwarded-allow-ips", "127.0.0.1"), [201, 201, 429, 201])]
)
def test_forwarded_for_counts_only_from_a_proxy_the_operator_names(tmp_path, proxies, statuses):
    server = Server(tmp_path / "yacht.db", agents="random", options=("--new-games-per-minute", "2", *proxies)).start()
    try:
        # behind no proxy, inventing an address gets no fresh quota; from a named proxy each client has its own
        assert new_games_from(server, ["10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2"]) == statuses
    finally:
        server.stop()


def test_serve_says_which_forwarded_headers_it_believes():
    shown = subprocess.run([sys.executable, "-m", "yacht_play.cli", "serve", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert "--forwarded-allow-ips" in shown.stdout and "X-Forwarded-For" in shown.stdout and "Default none" in shown.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "yacht_play.cli", "serve", "--forwarded-allow-ips", "proxy.example", "--db", "x.db"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert (
        refused.returncode == 2 and refused.stderr.count("\n") == 1 and "'proxy.example' is not an IP address" in refused.stderr
    )


def test_a_refusal_repeats_a_huge_or_odd_value_shortened_and_escaped(client):
    """A 10,000-character mode, row, hold or date was repeated whole in the refusal."""
    secret = new_game(client, name="echo")
    huge = "m" * 10_000
    answers = [
        client.post("/api/games", json={"name": "x", "mode": huge}),
        client.post("/api/games", json={"name": "x", "mode": "solitaire", "rules": huge}),
        client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": huge}),
        client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [huge]}),
        client.post(f"/api/games/{secret}/actions", json={"seq": huge, "row": "chance"}),
        client.get("/api/report", params={"since": huge}),
        client.get("/api/report", params={"mode": huge}),
    ]
    for answer in answers:
        error = one_line(answer, 400, "")
        assert len(error) < 400 and "characters)" in error, error
    error = one_line(client.post("/api/games", json={"name": "x", "mode": "a\x1b]0;t\x07"}), 400, "not offered")
    assert "\x1b" not in error and "\\x1b" in error


def test_every_answer_carries_the_security_headers(client):
    secret = new_game(client, name="headers")
    for method, path in [
        ("GET", "/"),
        ("GET", f"/game/{secret}"),
        ("GET", "/player/headers"),
        ("GET", "/report"),
        ("GET", "/api/agents"),
        ("GET", f"/api/games/{secret}"),
        ("GET", "/api/games/nothing"),  # a refusal
        ("GET", "/no/such/page"),
        ("GET", "/static/yacht.js"),
        ("GET", "/static/yacht.css"),
        ("POST", "/api/games"),
    ]:
        headers = client.request(method, path).headers
        policy = headers.get("content-security-policy", "")
        assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy and "object-src 'none'" in policy, path
        assert headers.get("x-content-type-options") == "nosniff" and headers.get("x-frame-options") == "DENY", path


def test_a_model_agent_is_shown_by_its_name_never_its_path(tmp_path):
    pytest.importorskip("torch", reason="ppo agents need the train extra")
    from tests.yacht_play.serve_support import ROOT

    model = f"ppo:{ROOT / 'models' / 'ppo.safetensors'}"
    service = GameService(db.connect(str(tmp_path / "paths.db")), ["greedy", model])
    folder = str(ROOT / "models")
    with TestClient(create_app(service)) as client:
        offered = client.get("/api/agents")
        assert folder not in offered.text
        assert [a["policy"] for a in offered.json()["agents"]] == ["greedy", "ppo:ppo.safetensors"]
        secret = new_game(client, "table", ["ppo:ppo.safetensors"])  # the shown name is the one a page sends back
        view = client.get(f"/api/games/{secret}")
        assert folder not in view.text and view.json()["game"]["players"][1]["policy"] == "ppo:ppo.safetensors"
        assert stored(service, secret).players[1]["policy"] == model  # the record keeps the real one
        play_out(client, service, secret, random.Random(3), check=False)
        for path in ("/api/report", "/report"):
            report = client.get(path)
            assert report.status_code == 200 and folder not in report.text and "ppo:ppo.safetensors" in report.text, path
        refused = client.post("/api/games", json={"name": "x", "mode": "duplicate", "agents": [model], "rules": "yahtzee"})
        assert refused.status_code == 400 and folder not in refused.text and "'ppo:ppo.safetensors'" in refused.text
        refused = client.post("/api/games", json={"name": "x", "mode": "duplicate", "agents": ["ppo:/srv/other.zip"]})
        assert refused.status_code == 400 and "/srv" not in refused.text and "ppo:ppo.safetensors" in refused.text
    assert lobby_names_of(["ppo:/a/best.zip", "ppo:/b/best.zip", "target:150"]) == {
        "ppo:/a/best.zip": "ppo:best.zip",
        "ppo:/b/best.zip": "ppo:best.zip#2",
        "target:150": "target:150",
    }


def bad_database(folder, kind: str) -> str:
    """A --db that no command can use: a text file, a corrupted SQLite file (its header, or pages only a read
    reaches), a schema_version of 'abc', an SQLite database in memory, a PostgreSQL URL with a password (after the
    user, or in the query string), a URL SQLAlchemy cannot read, a file name of 100,000 characters with an ESC."""
    path = folder / f"{kind}.db"
    if kind == "text":
        path.write_text("not a database\n")
    elif kind == "corrupt-header":
        with sqlite3.connect(path) as connection:
            connection.execute("create table t(x)")
        data = bytearray(path.read_bytes())
        data[100:400] = b"\xff" * 300
        path.write_bytes(bytes(data))
    elif kind == "corrupt-pages":
        engine = db.connect(str(path))
        with engine.begin() as connection:
            rows = [dict(game_id=f"g{i}", secret=f"s{i}", player="p" * 200, mode="solitaire", coach=False) for i in range(300)]
            connection.execute(db.games.insert(), [dict(r, header="{}" * 200, created="2026", finished="2026") for r in rows])
        engine.dispose()
        data = bytearray(path.read_bytes())
        data[len(data) // 2 : len(data) // 2 + 8192] = b"\x13" * 8192
        path.write_bytes(bytes(data))
    elif kind == "schema-abc":
        with sqlite3.connect(path) as connection:
            connection.execute("create table schema_version(version integer not null)")
            connection.execute("insert into schema_version values ('abc')")
    elif kind == "memory":
        return "sqlite://"
    elif kind == "password":
        return "postgresql://ann:s3cret-pw@127.0.0.1:1/yacht"
    elif kind == "query-password":
        return "postgresql://ann@127.0.0.1:1/yacht?host=127.0.0.1&password=s3cret-pw"
    elif kind == "unreadable-url":
        return "postgresql://ann:s3cret-pw@[::1/yacht"
    elif kind == "huge-name":
        return str(folder / ("\x1b]0;x\x07" + "y" * 100_000))
    return str(path)


@pytest.mark.parametrize(
    "kind",
    [
        "text",
        "corrupt-header",
        "corrupt-pages",
        "schema-abc",
        "memory",
        "password",
        "query-password",
        "unreadable-url",
        "huge-name",
    ],
)
@pytest.mark.parametrize("command", ["serve", "report", "export", "import"])
def test_a_database_no_command_can_use_is_refused_in_one_line(tmp_path, capsys, command, kind):
    from yacht_play.cli import main

    url = bad_database(tmp_path, kind)
    if command in ("serve", "import") and kind == "corrupt-pages":
        pytest.skip(f"{command} opens the store and reads no game here: only a read reaches the corrupted pages")
    extra = {"serve": ["--agents", "random"], "import": [str(tmp_path / "none.jsonl")]}.get(command, [])
    (tmp_path / "none.jsonl").write_text("")
    assert main([command, "--db", url, *extra]) == 2
    error = capsys.readouterr().err
    lines = [line for line in error.splitlines() if not line.startswith("yacht serve: loading agents")]
    assert len(lines) == 1 and "Traceback" not in error and "s3cret-pw" not in error, error
    assert len(lines[0]) < 700 and "\x1b" not in lines[0], lines[0][:700]
    expected = {
        "text": "file is not a database",
        "corrupt-header": "malformed",
        "corrupt-pages": "malformed",
        "schema-abc": "schema_version holds 'abc', not a version number",
        "memory": "in memory",
        "password": "ann:***@127.0.0.1:1",
        "query-password": "host=127.0.0.1&password=***",
        "unreadable-url": "cannot be read: give an SQLite file path or a URL",
        "huge-name": "... (1",
    }[kind]
    assert expected in lines[0]


def test_a_password_in_the_url_s_query_is_hidden_in_an_error_however_the_driver_writes_it():
    # a driver may echo a query's password decoded (s@cret) or as written (s%40cret); a repeated key holds several,
    # and a password may hold "=" (only the first one ends the key)
    from sqlalchemy.exc import SQLAlchemyError

    url = "postgresql://ann@127.0.0.1:1/yacht?password=s%40cret&password=t%26p=q"
    with pytest.raises(db.DatabaseError) as raised, db.database_errors(url, "open"):
        raise SQLAlchemyError("authentication failed for s@cret (s%40cret), then for t&p=q (t%26p=q)")
    message = str(raised.value)
    assert not [secret for secret in ("s@cret", "s%40cret", "t&p", "t%26p", "=q") if secret in message], message
    assert "authentication failed for *** (***), then for *** (***)" in message


def test_a_schema_version_that_is_no_number_is_shown_cut_to_40_characters(tmp_path):
    path = tmp_path / "games.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table schema_version(version integer not null)")
        connection.execute("insert into schema_version values (?)", ("v" * 100,))
    connection.close()
    with pytest.raises(db.DatabaseError) as raised:
        db.connect(str(path))
    assert f"the database's schema_version holds {'v' * 40!r}, not a version number" in str(raised.value)


@pytest.mark.parametrize(
    ("url", "memory"),
    [
        ("sqlite://", True),
        ("sqlite:///:memory:", True),
        ("sqlite:///file::memory:?cache=shared", True),
        ("sqlite:///games.db?mode=memory", True),
        ("sqlite:///games.db", False),
        ("sqlite:///memory.db", False),  # a file named so
        ("postgresql://ann@host/games", False),
        ("postgresql://ann@host:port/games", False),  # unreadable: not in memory (connect says what is wrong with it)
    ],
)
def test_a_database_in_memory_is_an_sqlite_one_without_a_file(url, memory):
    assert db.in_memory(url) is memory
