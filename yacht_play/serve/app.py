"""The HTTP side of ``yacht serve``: pages, a JSON API, and nothing else.

    GET  /                          the lobby
    GET  /game/{secret}             the table (and the game-over page once the game ends)
    GET  /player/{name}             a player's games
    GET  /api/agents                the agents offered (with the rule sets each plays), the rule sets and their titles,
                                    the default rule set, the modes (with the fewest and most agents of each)
    POST /api/games                 {"name", "mode", "agents": [...], "coach", "rules"} -> {"secret", "url"}
    GET  /api/games/{secret}?since=N   the game as the page sees it (agents owed a move move first)
    POST /api/games/{secret}/actions   {"seq", "hold" | "row" | "action"} -> the game after it (and the agents)
    GET  /api/games/{secret}/summary   the game-over figures
    GET  /api/players/{name}        a player's games
    GET  /report, /api/report       the population report (``?since=&until=&mode=&player=&rules=&include_imported=1``),
                                    as a page or JSON; without ``include_imported=1``, imported games are left out
                                    (the page: under the server's rules unless ``?rules=`` names others)
    GET  /favicon.ico               the site's icon (the pages link /static/favicon.svg)

Game creation is limited per client address (``new_games_per_minute``; over it: 429 and one line): the
connecting address, or the one a proxy named with ``yacht serve --forwarded-allow-ips`` forwards.

A refused request gets a 4xx status and ``{"error": "one line"}`` (a page request: a page in the site's look
saying the same line), and changes nothing. Game logic
lives in :mod:`yacht_play.serve.games`; its calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from collections import OrderedDict, deque
from pathlib import Path

from yacht_env.echo import MAX_ECHO, echoed
from yacht_env.extras import needs_extra
from yacht_play.report.json_document import JsonObject, report_document
from yacht_play.report.results import Report
from yacht_play.serve.games import MODES, GameService, Refused
from yacht_play.serve.sheets import rule_set_title, rules_from_request

with needs_extra("serve"):
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024  # bytes; a decision is a few dozen
BODY_TIMEOUT = 10.0  # seconds a request's body may take once its head is read: a decision's is one packet
MAX_DIGITS = 18  # of a number in a request: more than any count of decisions or bytes
SERVER_ERROR = "the server failed on this request (its log says why); try again, or start a new game"
NEW_GAMES_PER_MINUTE = 30  # yacht serve's default, per client address (create_app: 0, no limit, for tests)


def decimal(text: str) -> bool:
    """Whether ``text`` is a plain decimal number: ASCII digits only (``str.isdigit`` accepts "²", which ``int``
    refuses) and at most ``MAX_DIGITS`` of them (``int`` refuses over 4,300).
    """
    return 0 < len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


def shown(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` as a refusal repeats it (:func:`yacht_env.echo.echoed`): quoted, escaped, at most ``limit`` characters."""
    return echoed(text, limit)


def refused(message: str, status: int = 400) -> JSONResponse:
    """A refusal: the status and a one-line reason."""
    return JSONResponse({"error": message}, status_code=status)


async def json_body(request: Request):
    """The request body as JSON, refused (4xx) when it is not JSON, over ``MAX_BODY`` bytes, or slower to arrive
    than the app's ``body_timeout`` (408: a client that sends a byte now and then would hold its handler for ever).
    """
    timeout = request.app.state.body_timeout
    try:
        async with asyncio.timeout(timeout):
            return await parsed_json(request.headers, request.stream())
    except TimeoutError:
        raise Refused(f"the request body did not arrive within {timeout:g} s", 408) from None


async def parsed_json(headers, chunks):
    """The body the ``chunks`` bring, read as JSON: see :func:`json_body`."""
    if headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused("send the request body as JSON (Content-Type: application/json)", 415)
    length = headers.get("content-length")
    if length is not None and (not decimal(length) or int(length) > MAX_BODY):
        raise Refused(f"request body over {MAX_BODY} bytes", 413)
    data = b""
    async for chunk in chunks:
        data += chunk
        if len(data) > MAX_BODY:
            raise Refused(f"request body over {MAX_BODY} bytes", 413)
    try:
        return json.loads(data)
    except ValueError:
        raise Refused("the request body is not valid JSON") from None
    except RecursionError:  # e.g. 16 KB of "[": json recurses per level
        raise Refused("the request body nests too deeply") from None


class RateLimit:
    """At most ``per_minute`` events per key in any 60 s (a sliding window); 0 means no limit."""

    def __init__(self, per_minute: int):
        if per_minute < 0:
            raise ValueError(f"new games per minute must be >= 0 (0: no limit), got {per_minute}")
        self.per_minute = per_minute
        self._times: dict[str, deque] = {}
        self._guard = threading.Lock()

    def check(self, key: str) -> None:
        """Count one event for ``key``; ``Refused`` (429) when it is over the limit."""
        if not self.per_minute:
            return
        now = time.monotonic()
        with self._guard:
            times = self._times.setdefault(key, deque())
            while times and times[0] <= now - 60:
                times.popleft()
            if len(times) >= self.per_minute:
                wait = 60 - (now - times[0])
                raise Refused(
                    f"too many new games from {key}: at most {self.per_minute} a minute; try again in {wait:.0f} s", 429
                )
            times.append(now)
            if len(self._times) > 10000:  # forget quiet addresses
                for other in [k for k, t in self._times.items() if not t or t[-1] <= now - 60]:
                    del self._times[other]


class ServerTiming:
    """ASGI middleware: ``Server-Timing: app;dur=MS`` on every answer, the milliseconds from the request
    reaching the app to its answer, so that a client can tell the server's time from its own and the
    network's (the load benchmark reports both).
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        """Pass the request on; stamp the answer's headers with the time it took."""
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()

        async def timed(message):
            if message["type"] == "http.response.start":
                milliseconds = (time.perf_counter() - started) * 1000
                message["headers"] = [*message.get("headers", ()), (b"server-timing", f"app;dur={milliseconds:.2f}".encode())]
            await send(message)

        await self.app(scope, receive, timed)


# Scripts only from the site's own files (the pages have no inline script, and no answer is ever run as one);
# styles may be inline, since the pages and the report set a few style attributes. No framing, no plugins.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),  # a JSON answer or a static file is never read as a script or a page
    (b"x-frame-options", b"DENY"),  # for browsers that ignore frame-ancestors
    (b"referrer-policy", b"no-referrer"),  # a game's URL holds its secret
]


class SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every answer (pages, the API, static files, refusals, server errors).

    It wraps the whole app (:class:`Site`), so every answer passes it; an exception that escapes before any answer
    began (a bug in the error page itself) is answered here, a 500 in one line, and raised on for the server's log.
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        """Pass the request on; add the headers to the answer's."""
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def secured(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
            await send(message)

        try:
            await self.app(scope, receive, secured)
        except Exception:
            if not started:
                body = (SERVER_ERROR + "\n").encode()
                plain = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
                await secured({"type": "http.response.start", "status": 500, "headers": plain})
                await secured({"type": "http.response.body", "body": body})
            raise


class Site(Starlette):
    """The app: Starlette, with :class:`SecurityHeaders` and :class:`ServerTiming` around all of it.

    Starlette puts its own error handler (the one that answers 500) outside every middleware it is given, so a
    server error's answer skipped them; here they wrap the whole stack instead.
    """

    def build_middleware_stack(self):
        """Starlette's stack, inside the two."""
        return SecurityHeaders(ServerTiming(super().build_middleware_stack()))


def report_filters(request: Request):
    """The report's filters from the query string, refused (400) when a date is not a date, a mode not a mode,
    or ``include_imported`` not ``1`` or ``0``.
    """
    from yacht_play.report.filters import Filters, check_date, check_mode

    query = request.query_params
    try:
        rules = query.get("rules") or None
        rules_from_request(rules, None)
        return Filters(
            check_date("since", query.get("since") or None),
            check_date("until", query.get("until") or None),
            check_mode("mode", query.get("mode") or None),
            query.get("player") or None,
            rules,
            include_imported(query.get("include_imported", "0")),
        )
    except ValueError as error:
        raise Refused(str(error)) from None


FLAG_VALUES = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False, "": False}


def include_imported(text: str) -> bool:
    """``?include_imported=``: 1 (true, yes) counts the games brought in by yacht import; 0 (false, no) leaves them out."""
    if text.lower() not in FLAG_VALUES:
        raise ValueError(f"include_imported must be 1 or 0 (true or false), got {shown(text)}")
    return FLAG_VALUES[text.lower()]


def lobby_offer(service: GameService) -> dict:
    """What the lobby offers: the agents (with the rule sets each plays), the rule sets and their titles, the
    default rule set, and the modes with the fewest and most agents each seats.
    """
    from agents.registry import plays_alone, policy_spec
    from yacht_env.rules import RULE_SETS

    return {
        "agents": [
            {
                "policy": service.lobby_names[name],
                "name": name.split(":", 1)[0],
                "rules": service.agent_rules[name],
                "alone": plays_alone(name),  # False: it plays only at a table (not alone, not duplicate)
                "table_sizes": list(policy_spec(name).table_sizes),  # the fewest and most players of its tables
                "about": policy_spec(name).help,  # what it is, in the one line --help gives it
            }
            for name in service.agents
        ],
        "rules": list(RULE_SETS),
        "rule_titles": {name: rule_set_title(name) for name in RULE_SETS},
        "default_rules": service.rules.name,
        "modes": MODES,
    }


def finished_games(service: GameService) -> list:
    """The finished games of ``service``'s store, each agent named as the pages name it: never by the server's path."""
    from yacht_play import store

    games = store.all_games(service.engine, finished_only=True)
    for game in games:
        for seat in game.players:
            if seat["kind"] == "agent":
                seat["policy"] = service.shown_name(seat["policy"])
    return games


class Reports:
    """The finished games and the reports built on them, kept while the store's finished games stay the same.

    A finished game is never changed or removed, so the number of finished games names their set
    (:func:`yacht_play.store.count_finished`, one count per request, whichever server process added them); when it
    changes, everything kept is dropped. Reports are kept per filters, the ``KEEP`` last asked for; a report is
    immutable, so every caller shares the one kept.
    """

    KEEP = 16

    def __init__(self, service: GameService):
        self.service = service
        self.lock = threading.Lock()
        self.count: int | None = None
        self.games: list = []
        self.reports: OrderedDict = OrderedDict()

    def finished_games(self) -> list:
        """The finished games (:func:`finished_games`), loaded again only when their number changed."""
        from yacht_play import store

        count = store.count_finished(self.service.engine)
        with self.lock:
            if count == self.count:
                return self.games
        games = finished_games(self.service)  # a game finished since the count is there too: kept under the count
        with self.lock:
            if count != self.count:
                self.count, self.games, self.reports = count, games, OrderedDict()
            return self.games

    def report(self, games: list, filters) -> Report:
        """The report over ``games`` (as :meth:`finished_games` gave them) under ``filters``; ``ValueError`` as
        :func:`yacht_play.report.build.build_report` raises it.
        """
        from dataclasses import astuple

        from yacht_play.report.build import build_report

        key = astuple(filters)
        with self.lock:
            kept = self.reports.get(key) if games is self.games else None
            if kept is not None:
                self.reports.move_to_end(key)
                return kept
        report = build_report(games, filters, self.service.grader, likeness_policies(self.service))
        with self.lock:
            if games is self.games:
                self.reports[key] = report
                while len(self.reports) > self.KEEP:
                    self.reports.popitem(last=False)
        return report


def likeness_policies(service: GameService) -> list[tuple[str, str]]:
    """The policies whose likeness to the people the report measures: the baselines and the agents the server offers,
    each labelled as the pages name it.
    """
    from yacht_play.report.likeness import DEFAULT_POLICIES

    return [(service.shown_name(name) or name, name) for name in dict.fromkeys([*DEFAULT_POLICIES, *service.agents])]


def population_report(reports: Reports, request: Request) -> JsonObject:
    """The report's JSON over the finished games of the service's store, with the request's filters (refused: 400)."""
    filters = report_filters(request)
    try:
        return report_document(reports.report(reports.finished_games(), filters))
    except ValueError as error:  # games of several rule sets and no ?rules=
        raise Refused(str(error)) from None


def report_page_html(reports: Reports, request: Request) -> str:
    """The report as a page: under ``?rules=``, else the server's rules (or, when none of the games is under them,
    the rule set most of them are), with links to the report under each other rule set that has games.
    """
    from collections import Counter

    from yacht_env.rules import RULE_SETS
    from yacht_play.report.page import report_main, rules_picker
    from yacht_play.serve.pages import site_page

    service = reports.service
    filters = report_filters(request)
    games = reports.finished_games()
    counted = Counter(g.header["rules"] for g in games if filters.include_imported or not g.imported)
    if filters.rules is None:
        most_played = service.rules.name if counted[service.rules.name] or not counted else counted.most_common(1)[0][0]
        filters = dataclasses.replace(filters, rules=most_played)
    choices = [(name, rule_set_title(name), counted[name]) for name in RULE_SETS if counted[name] or name == filters.rules]
    query = {
        key: value
        for key, value in request.query_params.items()
        if key in ("since", "until", "mode", "player", "include_imported") and value
    }
    report = reports.report(games, filters)
    title = f"Yacht: agents and people, {rule_set_title(report.rules)}"
    return site_page(title, report_main(report, rules_picker(report.rules, choices, query)), "report-page")


def page(name: str):
    """An endpoint answering with the static page ``name``, marked ``Cache-Control: no-store``."""

    async def endpoint(request: Request) -> Response:
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})

    return endpoint


def wants_json(request: Request) -> bool:
    """Whether the request is the API's (its answers, refusals too, are JSON); the pages' refusals are pages."""
    return request.url.path.startswith("/api/")


async def on_refused(request: Request, error: Refused) -> Response:
    """A refused request's answer: its status and its one line (a page, for a page)."""
    from yacht_play.serve.pages import error_page

    return refused(str(error), error.status) if wants_json(request) else error_page(error.status, str(error))


async def on_http_error(request: Request, error: HTTPException) -> Response:
    """The answer for a path the app does not serve (404) or a method it does not take there (405)."""
    from yacht_play.serve.pages import error_page

    message = f"no page {shown(request.url.path, 80)}" if error.status_code == 404 else f"{request.method} is not taken here"
    if wants_json(request):
        return refused(message, error.status_code)
    return error_page(error.status_code, message)


async def on_server_error(request: Request, error: Exception) -> Response:
    """The answer for an exception nothing else took (a bug): the site's error page, or JSON for the API.

    The server logs the traceback (Starlette raises the exception again once this answer is sent).
    """
    from yacht_play.serve.pages import error_page

    return refused(SERVER_ERROR, 500) if wants_json(request) else error_page(500, SERVER_ERROR)


def create_app(service: GameService, new_games_per_minute: int = 0, body_timeout: float = BODY_TIMEOUT) -> Site:
    """The ASGI app serving ``service``'s games; a request body slower than ``body_timeout`` seconds gets 408."""
    if not 0 < body_timeout < float("inf"):
        raise ValueError(f"the body timeout must be a number of seconds above 0, got {body_timeout!r}")
    limit = RateLimit(new_games_per_minute)
    reports = Reports(service)

    async def agents(request: Request) -> Response:
        return JSONResponse(lobby_offer(service))

    async def new_game(request: Request) -> Response:
        limit.check(request.client.host if request.client else "unknown")
        body = await json_body(request)
        if not isinstance(body, dict):
            raise Refused("the request body must be a JSON object")
        secret = await run_in_threadpool(
            service.create,
            body.get("name"),
            body.get("mode"),
            body.get("agents", []),
            body.get("coach", False),
            body.get("rules"),
        )
        return JSONResponse({"secret": secret, "url": f"/game/{secret}"}, status_code=201)

    async def game(request: Request) -> Response:
        since = request.query_params.get("since", "0")
        if not decimal(since):
            raise Refused(f"since must be a number of decisions (digits 0-9, at most {MAX_DIGITS}), got {shown(since)}")
        return JSONResponse(await run_in_threadpool(service.advance, request.path_params["secret"], int(since)))

    async def act(request: Request) -> Response:
        body = await json_body(request)
        return JSONResponse(await run_in_threadpool(service.act, request.path_params["secret"], body))

    async def summary(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(service.summary, request.path_params["secret"]))

    async def history(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(service.history, request.path_params["name"]))

    async def report_json(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(population_report, reports, request))

    async def report_page(request: Request) -> Response:
        page_html = await run_in_threadpool(report_page_html, reports, request)
        return HTMLResponse(page_html, headers={"Cache-Control": "no-store"})

    async def icon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    routes = [
        Route("/", page("lobby.html")),
        Route("/game/{secret}", page("game.html")),
        Route("/player/{name:path}", page("player.html")),  # a name may hold "/" (sent as %2F)
        Route("/api/agents", agents),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{secret}", game),
        Route("/api/games/{secret}/actions", act, methods=["POST"]),
        Route("/api/games/{secret}/summary", summary),
        Route("/api/players/{name:path}", history),
        Route("/report", report_page),
        Route("/favicon.ico", icon),  # what a browser asks for on a page that names no icon
        Route("/api/report", report_json),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    site = Site(routes=routes, exception_handlers={Refused: on_refused, HTTPException: on_http_error, Exception: on_server_error})
    site.state.body_timeout = body_timeout
    return site
