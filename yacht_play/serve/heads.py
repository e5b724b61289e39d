"""Request heads (the request line and the headers) read within bounds, before any of the app runs.

uvicorn's default parser (httptools) keeps a header of any size and any number of headers, and joins a
header's pieces as they arrive, so one connection streaming a 150 MB header held the event loop, and every
other request, for tens of seconds. ``yacht serve`` reads HTTP/1.1 with h11 instead, through uvicorn's own
h11 protocol: h11 refuses a head that grows past ``max_bytes`` without ending
(``max_incomplete_event_size``), and :class:`HeadLimitedProtocol` adds what neither has:

* at most ``max_count`` headers;
* a head must arrive within ``timeout`` seconds of the connection being ready for it (a new connection, or
  the end of the answer before), so a client that sends its head a byte at a time is let go;
* the refusals are answered as such, 431 (Request Header Fields Too Large) and 408 (Request Timeout), in
  one line with the security headers, where uvicorn answers every parse error with a bare 400.

:func:`head_limited` makes the protocol class that ``uvicorn.run(http=...)`` takes for given limits.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http import HTTPStatus

from yacht_env.extras import needs_extra

with needs_extra("serve"):
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEADER_BYTES = 16 * 1024  # the request line and every header: a browser sends about 1 KB, cookies and all
MAX_HEADERS = 100  # a browser sends about 15; a proxy adds a few
HEADER_TIMEOUT = 10.0  # seconds for a whole head, once the connection is ready for one


@dataclass(frozen=True)
class HeadLimits:
    """The bounds of a request head: its bytes, its number of headers, and the seconds it may take to arrive."""

    max_bytes: int = MAX_HEADER_BYTES
    max_count: int = MAX_HEADERS
    timeout: float = HEADER_TIMEOUT  # yacht serve's options check each is above 0


class _BoundedConnection(h11.Connection):
    """h11's server side, refusing a head over ``limits`` and saying why in :attr:`refusal`, (status, one line)."""

    def __init__(self, limits: HeadLimits, on_head):
        super().__init__(h11.SERVER, max_incomplete_event_size=limits.max_bytes)
        self.limits = limits
        self.on_head = on_head  # called once a request's head is read whole
        self.refusal: tuple[int, str] = (400, "the request is not valid HTTP/1.1")

    def next_event(self):
        """h11's next event; a head over the bounds is refused here even when it arrived whole in one read."""
        # h11 counts only a head still incomplete, so one that arrived whole in a single read (up to 256 KB) would
        # pass: the head's own size is what the request consumed of the buffer.
        before = len(self._receive_buffer)
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as error:
            if error.error_status_hint == 431:
                self.refusal = (431, self.too_long)
            raise
        if isinstance(event, h11.Request):
            self.on_head()
            if before - len(self._receive_buffer) > self.limits.max_bytes:
                self.refusal = (431, self.too_long)
            elif len(event.headers) > self.limits.max_count:
                self.refusal = (431, f"the request has {len(event.headers):,} headers, more than {self.limits.max_count:,}")
            else:
                return event
            raise h11.RemoteProtocolError(self.refusal[1], error_status_hint=431)
        return event

    @property
    def too_long(self) -> str:
        return f"the request line and headers are over {self.limits.max_bytes:,} bytes"


class HeadLimitedProtocol(H11Protocol):
    """uvicorn's h11 protocol under :attr:`limits`; :func:`head_limited` sets them."""

    limits = HeadLimits()
    extra_headers: tuple[tuple[bytes, bytes], ...] = ()  # on the refusals: the app's security headers

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.conn = self.bounded = _BoundedConnection(self.limits, self._disarm)
        self.head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        """uvicorn's, and the clock starts for the first head."""
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        """uvicorn's, and the clock stops."""
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        """uvicorn's, and the clock starts for the next head."""
        # Armed before uvicorn's own handling, which reads a pipelined request at once (and so disarms it).
        self._await_head()
        super().on_response_complete()

    def _await_head(self) -> None:
        self._disarm()
        self.head_timer = self.loop.call_later(self.limits.timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_timed_out(self) -> None:
        self.head_timer = None
        if self.transport.is_closing():
            return
        started = self.conn.their_state is h11.IDLE and bool(self.conn.trailing_data[0])
        if started and self.conn.our_state is h11.IDLE:
            self.bounded.refusal = (408, f"the request line and headers did not arrive within {self.limits.timeout:g} s")
            self.refuse()
        else:  # an idle connection: nothing asked, nothing to answer
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """What uvicorn calls for a head h11 refused: :meth:`refuse` (``msg`` is uvicorn's generic line)."""
        self.refuse()

    def refuse(self) -> None:
        """Answer the head refused (its connection's ``refusal``: the status and one line), and close the connection."""
        status, line = self.bounded.refusal
        body = (line + "\n").encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *self.extra_headers,
        ]
        answer = h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase)
        try:
            for event in (answer, h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # an answer had already begun: nothing more can be said on this connection
            pass
        self.transport.close()


def head_limited(limits: HeadLimits, extra_headers=()) -> type[HeadLimitedProtocol]:
    """The protocol class for ``uvicorn.run(http=...)`` that reads heads within ``limits``, its refusals carrying
    ``extra_headers`` ((name, value) byte pairs).
    """
    return type("HeadLimitedProtocol", (HeadLimitedProtocol,), {"limits": limits, "extra_headers": tuple(extra_headers)})
