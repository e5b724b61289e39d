"""Simulated people: bots that play ``yacht serve`` through its HTTP API, with known noise.

    yacht simulate-players --players 20 --games 5 --url http://127.0.0.1:8080 --temperature 2

A simulated person sees what a browser sees (the view of ``GET /api/games/{secret}``) and chooses
by a softmax over the optimal Q-values of its position at a ``temperature`` (in points), the rule
of the policy ``softmax:T`` (:mod:`agents.policies.softmax`): choice ``c`` (a row, or a distinct multiset of
dice to keep) with probability proportional to ``exp((Q*(c) - max Q*) / T)``. Temperature 0 is the
optimum (ties to the lowest action index, as ``optimal`` breaks them). Since the bot knows its
choice probabilities, it knows its *expected* loss per decision exactly, ``sum_a p(a) (max Q* -
Q*(a))``: a report over its games must recover it.

A game is a generator of requests (:func:`play_game`), so the same logic runs synchronously (an
``httpx.Client`` or Starlette's ``TestClient``: :func:`run_sync`) and concurrently (an
``httpx.AsyncClient``: :func:`run_async`). Both drivers retry a request the server did not answer
(a refused connection while it restarts, a 5xx) with the same body: the action's ``seq`` makes a
retry idempotent. Every decision the server acknowledged is listed in :class:`Played`, so a test
can check the database holds exactly those.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from yacht_env.option_values import decimal_number, whole_number
from yacht_env.rules import rule_set
from yacht_play.options import DEFAULT_PORT, add_rules_option
from yacht_play.records import HUMAN_MODES
from yacht_play.report.text import plural

RETRY_SECONDS = 60.0  # how long a driver keeps retrying a request the server does not answer
RETRY_PAUSE = 0.05  # seconds between two tries of a request


@dataclass
class Played:
    """What one simulated game saw: its secret, the acknowledged decisions, the outcome, the timings."""

    name: str
    mode: str
    agents: list[str]
    secret: str | None = None
    acknowledged: dict[int, int] = field(default_factory=dict)  # decision number -> action, as acknowledged
    expected_losses: list[float] = field(default_factory=list)  # the bot's exact expected loss, per decision
    latencies: list[float] = field(default_factory=list)  # seconds per action request, agents' thinking excluded
    server_latencies: list[float] = field(default_factory=list)  # the same requests as the server timed them
    agent_seconds: list[float] = field(default_factory=list)  # agents' thinking, in the requests where they moved
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    totals: list[int] | None = None
    winners: list[str] | None = None


class Chooser:
    """The softmax-over-Q* choice of a simulated person; ``rng`` draws its noise."""

    def __init__(self, temperature: float, rng: np.random.Generator, rules=None):
        from agents.policies.softmax import check_temperature
        from yacht_play.coach import Grader

        self.temperature = check_temperature(temperature)
        self.rng = rng
        self.requested = None if rules is None else rule_set(rules).name  # the rules its games ask for (None: the server's)
        self.rules = rule_set(rules)
        self.grader = Grader(self.rules)

    def choose(self, current: dict, view: dict | None = None) -> tuple[int, float]:
        """The action for the position a view shows, and its exact expected loss.

        With the whole ``view``, the game's own rules and the person's sheet (open rows, upper
        subtotal, Yahtzee box) are read from it; without, the chooser's rules and the rows of
        ``current["now"]`` (all the open rows, except where a forced joker narrows them).
        """
        if view is not None and view.get("rules") and view["rules"]["name"] != self.rules.name:
            from yacht_play.coach import Grader

            self.rules = rule_set(view["rules"]["name"])
            self.grader = Grader(self.rules)
        rules = self.rules
        upper_total = yahtzee_full = 0
        if view is not None:
            sheet = view["sheets"][current["seat"]]
            open_bits = sum(1 << c for c, points in enumerate(sheet["cells"]) if points is None)
            upper_total = sheet.get("upper_subtotal", 0)
            row = rules.yahtzee_row_index
            yahtzee_full = int(rules.tracks_yahtzee_box and row >= 0 and bool(sheet["cells"][row]))
        else:
            open_bits = sum(1 << rules.category_names.index(name) for name in current["now"])
        q = self.grader.q_values(np.array([current["dice"]]), current["rolls_left"], open_bits, upper_total, yahtzee_full)[0]
        from agents.policies import softmax

        hand = np.array([rules.hand(current["dice"])])
        p = softmax.probabilities(q[None], hand, rules, self.temperature)[0]
        legal = np.isfinite(q)
        expected_loss = float(np.sum(p[legal] * (q[legal].max() - q[legal])))
        return int(softmax.choose(q[None], hand, rules, self.temperature, self.rng)[0]), expected_loss


def play_game(chooser: Chooser, played: Played, coach: bool = False):
    """One game through the API, as a generator: yields ``(method, path, body)``, receives ``(status, json)``."""
    request = {"name": played.name, "mode": played.mode, "agents": played.agents, "coach": coach}
    if chooser.requested is not None:
        request["rules"] = chooser.requested
    status, body = yield "POST", "/api/games", request
    if status != 201:
        played.errors.append(f"create: {status} {body}")
        return
    played.secret = body["secret"]
    status, view = yield "GET", f"/api/games/{played.secret}", None
    while status == 200 and not view["finished"]:
        current = view["current"]
        if current is None or current["kind"] != "human":  # agents owe moves: ask again
            status, view = yield "GET", f"/api/games/{played.secret}", None
            continue
        action, expected_loss = chooser.choose(current, view)
        seq = view["seq"]
        status, answer = yield "POST", f"/api/games/{played.secret}/actions", {"seq": seq, "action": action}
        if status == 200:
            played.acknowledged[seq] = action
            played.expected_losses.append(expected_loss)
            view = answer
        elif status == 409:  # behind (a retry whose answer was lost): look again
            status, view = yield "GET", f"/api/games/{played.secret}", None
        else:
            played.errors.append(f"action {seq}: {status} {answer}")
            return
    if status != 200:
        played.errors.append(f"view: {status} {view}")
        return
    played.totals = [sheet["total"] for sheet in view["sheets"]]
    played.winners = view["winners"]


def _time_request(played: Played, method: str, response, body, seconds: float) -> None:
    if method == "POST" and response.status_code == 200 and isinstance(body, dict) and "seq" in body:
        thinking = float(body.get("agent_seconds") or 0.0)
        played.latencies.append(seconds - thinking)
        timing = response.headers.get("server-timing", "")  # "app;dur=MS" (yacht_play.serve.app.ServerTiming)
        if timing.startswith("app;dur="):
            played.server_latencies.append(float(timing[len("app;dur=") :]) / 1000 - thinking)
        if any(event["kind"] == "agent" for event in body.get("events", [])):  # agents moved in this request
            played.agent_seconds.append(thinking)


class Attempt:
    """One try at a request, for a driver to make: wait ``wait`` seconds, then send it inside ``with attempt:``,
    which times it and takes a transport error (a refused connection while the server restarts) as no answer.
    """

    def __init__(self, method: str, path: str, body: dict | None, wait: float = 0.0):
        self.method, self.path, self.body, self.wait = method, path, body, wait
        self.response = None  # set by the driver when the server answered
        self.started = 0.0

    def __enter__(self) -> Attempt:
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        import httpx

        return kind is not None and issubclass(kind, httpx.TransportError)  # no answer: the policy tries again


def attempts(game, played: Played, think=None):
    """The drivers' one retry policy, as a generator of :class:`Attempt` for the requests of ``game``.

    A request the server did not answer (no response, or a 5xx) is tried again with the same body every ``RETRY_PAUSE`` s
    for ``RETRY_SECONDS`` (the action's ``seq`` makes that idempotent), then given up with an error in
    ``played``. ``think``: None, or a function giving the seconds to wait before each decision is sent.
    """
    request = next(game)
    while True:
        method, path, body = request
        wait = think() if think is not None and method == "POST" and path.endswith("/actions") else 0.0
        first = None
        while True:
            attempt = Attempt(method, path, body, wait)
            yield attempt
            first = first or attempt  # the retries' clock starts when the request is first sent, after the wait
            response = attempt.response
            if response is not None and response.status_code < 500:
                break
            if time.perf_counter() > first.started + RETRY_SECONDS:
                played.errors.append(f"{method} {path}: no answer within {RETRY_SECONDS:.0f} s")
                return
            played.retries += 1
            wait = RETRY_PAUSE
        answer = response.json()
        _time_request(played, method, response, answer, time.perf_counter() - attempt.started)
        try:
            request = game.send((response.status_code, answer))
        except StopIteration:
            return


def run_sync(client, chooser: Chooser, played: Played, coach: bool = False) -> Played:
    """Play one game with a synchronous client (``httpx.Client``, ``TestClient``)."""
    for attempt in attempts(play_game(chooser, played, coach), played):
        if attempt.wait:
            time.sleep(attempt.wait)
        with attempt:
            attempt.response = client.request(attempt.method, attempt.path, json=attempt.body)
    return played


async def run_async(client, chooser: Chooser, played: Played, coach: bool = False, think=None) -> Played:
    """Play one game with an ``httpx.AsyncClient``.

    ``think``: None, or a function giving the seconds to wait before each decision is sent, as a person
    looks at the dice before choosing (the wait is not part of the request's latency).
    """
    for attempt in attempts(play_game(chooser, played, coach), played, think):
        if attempt.wait:
            await asyncio.sleep(attempt.wait)
        with attempt:
            attempt.response = await client.request(attempt.method, attempt.path, json=attempt.body)
    return played


def person_clients(url: str, timeout: float = 60.0):
    """A factory of ``httpx.AsyncClient``s for ``url``, one per simulated person, as each browser has its own
    connection (one pool shared by hundreds of people costs httpx a scan of every connection per request, and
    the players would measure that).

    The clients share one TLS context: httpx otherwise builds one per client, loading the certificate store
    (about 45 ms each), and 200 people starting at once would block the event loop for seconds, which every
    request then in flight would count as the server's latency.
    """
    import ssl

    import httpx

    context = ssl.create_default_context()

    def client() -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=url, timeout=timeout, verify=context, limits=httpx.Limits(max_connections=2))

    return client


def opponents_of(mode: str, agents: list[str], index: int) -> list[str]:
    """The agents game number ``index`` is played against: none in solitaire, one in turn otherwise."""
    if mode == "solitaire" or not agents:
        return []
    return [agents[index % len(agents)]]


async def simulate(
    url: str,
    players: int,
    games: int,
    temperature: float,
    mode: str,
    agents: list[str],
    seed: int = 0,
    prefix: str = "sim",
    timeout: float = 60.0,
    rules: str | None = None,
) -> list[Played]:
    """``players`` simulated people playing ``games`` games each, concurrently, against the server at ``url``
    (under ``rules``, a name of ``RULE_SETS``; default the server's).
    """
    chooser_rng = np.random.default_rng(seed)
    new_client = person_clients(url, timeout)

    async def person(number: int, chooser: Chooser) -> list[Played]:
        async with new_client() as client:
            out = []
            for g in range(games):
                played = Played(f"{prefix}{number:04d}", mode, opponents_of(mode, agents, number + g))
                out.append(await run_async(client, chooser, played))
            return out

    choosers = [Chooser(temperature, np.random.default_rng(chooser_rng.integers(2**63)), rules) for _ in range(players)]
    results = await asyncio.gather(*(person(n, choosers[n]) for n in range(players)))
    return [p for games_of in results for p in games_of]


# -- command line ------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    """The options of ``yacht simulate-players``."""
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--url",
        default=f"http://127.0.0.1:{DEFAULT_PORT}",
        help="the yacht serve to play on (default %(default)s, where yacht serve listens unless told)",
    )
    parser.add_argument("--players", type=whole_number(), default=10, help="simulated people playing at once (default 10)")
    parser.add_argument("--games", type=whole_number(), default=1, help="games each plays, one after the other (default 1)")
    parser.add_argument(
        "--temperature",
        type=decimal_number(noun="a temperature in points"),
        default=1.0,
        help="softmax temperature over Q*, in points: 0 plays the optimum (default 1)",
    )
    parser.add_argument("--mode", default="duplicate", choices=HUMAN_MODES, help="game mode (default duplicate)")
    parser.add_argument(
        "--agents",
        default="optimal",
        help="comma-separated agents to play against, in turn (default optimal); they must be offered by the server",
    )
    parser.add_argument("--seed", type=whole_number(), default=0, help="seed of the players' noise (the dice are the server's)")
    add_rules_option(parser, "the rule set of the games: {names} (default: the server's)")
    parser.add_argument("--prefix", default="sim", help="player names are PREFIX0000, PREFIX0001, ... (default sim)")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Play the simulated people; the exit status is 1 when any request failed."""
    prog = "yacht simulate-players"
    for option, value in (("--players", args.players), ("--games", args.games)):
        if value < 1:
            print(f"{prog}: {option} must be at least 1, got {value}", file=sys.stderr)
            return 2
    if not args.temperature >= 0 or math.isinf(args.temperature):
        print(f"{prog}: --temperature must be a number >= 0, got {args.temperature}", file=sys.stderr)
        return 2
    agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.mode != "solitaire" else []
    try:
        import httpx

        offered = [a["policy"] for a in httpx.get(args.url.rstrip("/") + "/api/agents", timeout=10).json()["agents"]]
    except ImportError as error:
        print(f"{prog}: needs httpx ({error.name} is missing): pip install 'yacht-rl[serve]'", file=sys.stderr)
        return 2
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
        print(
            f"{prog}: no yacht serve answers at {args.url} ({type(error).__name__}); start one with yacht serve", file=sys.stderr
        )
        return 2
    missing = [a for a in agents if a not in offered]
    if missing or (args.mode != "solitaire" and not agents):
        print(
            f"{prog}: --agents {','.join(missing) or '(none)'}: the server offers {', '.join(offered) or 'no agents'}",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    results = asyncio.run(
        simulate(
            args.url, args.players, args.games, args.temperature, args.mode, agents, args.seed, args.prefix, rules=args.rules
        )
    )
    seconds = time.perf_counter() - started
    errors = [e for p in results for e in p.errors]
    finished = sum(p.winners is not None for p in results)
    losses = [x for p in results for x in p.expected_losses]
    print(
        f"{prog}: {finished} of {len(results)} games finished in {seconds:.1f} s by {plural(args.players, 'player')}; "
        f"{plural(len(losses), 'decision')}, expected loss per decision {np.mean(losses) if losses else float('nan'):.3f} "
        f"(temperature {args.temperature:g}); {plural(len(errors), 'error')}",
        file=sys.stderr,
    )
    for error in errors[:5]:
        print(f"{prog}: {error}", file=sys.stderr)
    return 1 if errors else 0


def audit(engine, played: list[Played]) -> dict:
    """Check a database against what simulated people were told: counts of what is right and wrong.

    For every game a player created: its decisions are numbered 0, 1, ... without gap or double,
    it replays as a legal game with the project's rules, every acknowledged decision is stored
    with the acknowledged action (else ``missing``), and every stored decision of the person was
    acknowledged (else ``unacknowledged``).
    """
    from sqlalchemy import select

    from yacht_play import store
    from yacht_play.match import Match
    from yacht_play.records import RecordError

    counts = {
        "games": 0,
        "finished": 0,
        "decisions": 0,
        "acknowledged": 0,
        "missing": 0,
        "unacknowledged": 0,
        "doubled_or_gaps": 0,
        "illegal": 0,
    }
    for p in played:
        if p.secret is None:
            continue
        row = store.game_row(engine, p.secret)
        if row is None:
            counts["missing"] += len(p.acknowledged)
            continue
        counts["games"] += 1
        with engine.connect() as connection:
            numbers = (
                connection.execute(
                    select(store.decisions.c.number)
                    .where(store.decisions.c.game_id == row.game_id)
                    .order_by(store.decisions.c.number)
                )
                .scalars()
                .all()
            )
        if list(numbers) != list(range(len(numbers))):
            counts["doubled_or_gaps"] += 1
        record = store.load_record(engine, row)
        try:
            match = Match.resume(record, agents=False)  # the recorded decisions replayed: no policy needed
            counts["finished"] += match.finished
        except RecordError:
            counts["illegal"] += 1
        stored = {i: d["action"] for i, d in enumerate(record.decisions) if d["kind"] == "human"}
        counts["decisions"] += len(record.decisions)
        counts["acknowledged"] += len(p.acknowledged)
        counts["missing"] += sum(stored.get(n) != action for n, action in p.acknowledged.items())
        counts["unacknowledged"] += sum(n not in p.acknowledged for n in stored)
    return counts
