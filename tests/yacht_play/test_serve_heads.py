"""Request heads over ``yacht serve``'s bounds, sent over a socket to a real server: too many bytes, too many
headers, too slow. Each gets its status and one line, and the server goes on answering everyone else."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("uvicorn", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
httpx = pytest.importorskip("httpx")

from tests.yacht_play.serve_support import ROOT, Server  # noqa: E402
from yacht_play.serve.heads import MAX_HEADER_BYTES, MAX_HEADERS  # noqa: E402

TIMEOUT = 2  # --header-timeout of the server under test: seconds


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("heads")
    options = ("--header-timeout", str(TIMEOUT), "--body-timeout", str(TIMEOUT))
    server = Server(folder / "yacht.db", agents="random", options=options).start()
    yield server
    server.stop()


def exchange(server, head: bytes, timeout: float = 30) -> bytes:
    """Send ``head`` on a new connection and read the answer until the server closes it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as connection:
        try:
            connection.sendall(head)
        except OSError:  # the server refused and closed while the rest was on its way
            pass
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:  # what was unread when it closed: the answer came first
            pass
    return answer


def request(headers: list[bytes]) -> bytes:
    return b"GET /api/agents HTTP/1.1\r\nHost: test\r\n" + b"".join(h + b"\r\n" for h in headers) + b"Connection: close\r\n\r\n"


def status_and_line(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode()


def still_answers(server) -> bool:
    return httpx.get(server.url + "/api/agents", timeout=5).status_code == 200


@pytest.mark.parametrize("size", [MAX_HEADER_BYTES, 1_000_000])
def test_a_head_over_the_byte_bound_gets_431_in_one_line(server, size):
    status, line = status_and_line(exchange(server, request([b"X-Big: " + b"a" * size])))
    assert status == 431 and line == f"the request line and headers are over {MAX_HEADER_BYTES:,} bytes\n"
    assert still_answers(server)


def test_headers_up_to_the_bounds_are_read_and_one_more_is_refused(server):
    # Host and Connection are two of the headers; the rest fill the count to the bound exactly.
    fill = [b"X-%d: 1" % i for i in range(MAX_HEADERS - 2)]
    assert status_and_line(exchange(server, request(fill)))[0] == 200
    status, line = status_and_line(exchange(server, request([*fill, b"X-one-more: 1"])))
    assert status == 431 and line == f"the request has {MAX_HEADERS + 1} headers, more than {MAX_HEADERS}\n"
    near = b"X-Near: " + b"a" * (MAX_HEADER_BYTES - len(request([b"X-Near: "])))  # the whole head at the bound
    assert len(request([near])) == MAX_HEADER_BYTES and status_and_line(exchange(server, request([near])))[0] == 200


@pytest.mark.parametrize(
    "head",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
        b"POST /api/games HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip\r\n\r\n",  # h11 refuses it as 501
    ],
)
def test_a_head_that_is_not_http_gets_400_in_one_line(server, head):
    assert status_and_line(exchange(server, head)) == (400, "the request is not valid HTTP/1.1\n")
    assert still_answers(server)


def test_ten_thousand_headers_are_refused(server):
    status, _ = status_and_line(exchange(server, request([b"X-%d: 1" % i for i in range(10_000)])))
    assert status == 431


def test_a_connection_that_asks_nothing_in_time_is_closed_without_an_answer(server):
    started = time.monotonic()
    assert exchange(server, b"") == b""
    # not cut before its time: the server's loop reads its clock once an iteration, so allow it a little early
    assert TIMEOUT - 0.5 < time.monotonic() - started < 10 * TIMEOUT


def test_a_head_that_does_not_arrive_in_time_gets_408_and_others_are_answered_meanwhile(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as slow:
        started = time.monotonic()
        slow.sendall(b"GET /api/agents HTTP/1.1\r\nHost: test\r\n")
        assert still_answers(server)
        try:
            slow.sendall(b"X-Slow: 1\r\n")  # bytes keep coming, but not the end of the head
        except OSError:  # on a loaded machine the answer may already have come and the connection closed
            pass
        answer = b""
        try:
            while chunk := slow.recv(65536):
                answer += chunk
        except ConnectionResetError:  # the bytes sent after the answer were unread when it closed
            pass
        waited = time.monotonic() - started
    status, line = status_and_line(answer)
    assert status == 408 and line == f"the request line and headers did not arrive within {TIMEOUT} s\n"
    assert waited > TIMEOUT - 0.5  # not cut before its time (how late it comes depends on the machine's load)


def test_a_body_that_does_not_arrive_in_time_gets_408_and_others_are_answered_meanwhile(server):
    head = b"POST /api/games HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as slow:
        started = time.monotonic()
        slow.sendall(head + b'{"mode": ')  # a head in time, then a body that stops short of its length
        assert still_answers(server)
        answer = b""
        try:
            while chunk := slow.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
        waited = time.monotonic() - started
    status, body = status_and_line(answer)
    assert status == 408 and json.loads(body) == {"error": f"the request body did not arrive within {TIMEOUT} s"}
    assert waited > TIMEOUT - 0.5 and still_answers(server)


def test_a_body_that_arrives_in_pieces_within_the_time_is_read(server):
    body = json.dumps({"name": "ann", "mode": "solitaire", "agents": []}).encode()
    head = b"POST /api/games HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nConnection: close\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body[:5])
        time.sleep(TIMEOUT / 4)
        connection.sendall(body[5:])
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert status_and_line(answer)[0] == 201


def test_a_streaming_header_neither_stalls_other_requests_nor_grows_the_server(server):
    """One connection streams a header of up to 150 MB: the others are answered as fast as ever."""
    sent = []

    def stream():
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: test\r\nX-Stream: ")
            chunk, total = b"a" * 65536, 0
            try:
                while total < 150_000_000:
                    connection.sendall(chunk)
                    total += len(chunk)
            except OSError:  # refused and closed
                pass
            sent.append(total)

    streamer = threading.Thread(target=stream)
    streamer.start()
    for _ in range(20):  # each within still_answers' timeout: a stalled server fails it
        assert still_answers(server)
    streamer.join(60)
    # cut off at the bound: what got through is the bound and the sockets' buffers (a few MB), not 150 MB
    assert not streamer.is_alive() and sent[0] < 20_000_000


def test_the_bounds_are_options(tmp_path):
    server = Server(tmp_path / "yacht.db", agents="random", options=("--max-header-bytes", "65536", "--max-headers", "5"))
    server.start()
    try:
        assert status_and_line(exchange(server, request([b"X-Big: " + b"a" * 40_000])))[0] == 200
        status, line = status_and_line(exchange(server, request([b"X-A: 1", b"X-B: 1", b"X-C: 1", b"X-D: 1"])))
        assert status == 431 and line == "the request has 6 headers, more than 5\n"
    finally:
        server.stop()


@pytest.mark.parametrize(
    "option, value, problem",
    [
        ("--max-header-bytes", "0", "argument --max-header-bytes: expected an integer 1 or more, got 0"),
        ("--max-headers", "-1", "argument --max-headers: expected an integer 1 or more, got -1"),
        ("--header-timeout", "inf", "argument --header-timeout: expected a number of seconds 0 or more in digits 0-9"),
        ("--header-timeout", "0", "--header-timeout 0 is not above 0"),
        ("--body-timeout", "0", "--body-timeout 0 is not above 0"),
        ("--body-timeout", "١", "argument --body-timeout: expected a number of seconds 0 or more in digits 0-9"),
    ],
)
def test_a_bound_that_is_no_bound_is_refused_in_one_line(option, value, problem):
    refused = subprocess.run(
        [sys.executable, "-m", "yacht_play.cli", "serve", option, value, "--db", "x.db"], cwd=ROOT, capture_output=True, text=True
    )
    # the option's own line, after argparse's usage where argparse refuses it
    assert refused.returncode == 2 and problem in refused.stderr.splitlines()[-1] and "Traceback" not in refused.stderr


def test_a_head_within_the_bound_is_read_though_a_long_body_arrives_with_it_and_one_over_it_is_refused():
    import h11

    from yacht_play.serve.heads import HeadLimits, _BoundedConnection

    heads = []
    body = b"x" * (2 * MAX_HEADER_BYTES)  # in the same read as its head, as a client that sends at once may
    connection = _BoundedConnection(HeadLimits(), on_head=lambda: heads.append("head"))
    connection.receive_data(b"POST /api/games HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    assert isinstance(connection.next_event(), h11.Request) and heads == ["head"]
    assert isinstance(connection.next_event(), h11.Data)

    head = b"GET /api/agents HTTP/1.1\r\nHost: test\r\nX-Long: " + b"a" * 200 + b"\r\n\r\n"  # whole, in one read
    connection = _BoundedConnection(HeadLimits(max_bytes=200), on_head=lambda: None)
    connection.receive_data(head)
    with pytest.raises(h11.RemoteProtocolError):
        connection.next_event()
    assert connection.refusal == (431, "the request line and headers are over 200 bytes")
