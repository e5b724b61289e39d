"""Load on ``yacht serve``: N simulated people playing at once over loopback, on SQLite or PostgreSQL.

    python benchmarks/bench_serve.py --players 200 --games 1 --db sqlite
    python benchmarks/bench_serve.py --players 200 --games 1 --db postgresql   # a throwaway local cluster
    python benchmarks/bench_serve.py --players 200 --think 0 --db sqlite       # no pauses: the server's capacity

One server (a subprocess on 127.0.0.1, creation limit off: every player shares one address); half
of the people play solitaire, half play a table against one agent, ``optimal`` and the PPO model in
turn. Each person chooses like :mod:`yacht_play.simulate` (softmax over Q*, temperature 1), with its
own HTTP client (as each browser has its own connection), and looks at the dice before each
decision for a pause drawn from an exponential distribution of mean ``--think`` seconds (default 2:
a fast person). With ``--think 0`` every person sends its next decision the moment it has the
answer: the server runs flat out, and the latency is set by its capacity (N people over actions/s,
Little's law), not by how fast it answers one request.

Printed: games/s; latency per action request, p50/p95/p99, with the agents' thinking in that request
(measured by the server, returned as ``agent_seconds``) taken out, and that thinking apart; errors;
and the audit of the database against what the people were told (acknowledged decisions all stored
once, every game legal). The client runs on the same machine and its own waiting is in the latency.
Goal: 200 people, p99 < 100 ms, 0 errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from yacht_env.option_values import decimal_number, whole_number
from yacht_play.serve.local_server import LocalServer, free_port, postgres_bindir
from yacht_play.simulate import Chooser, Played, audit, person_clients, run_async

PPO = "ppo:yacht"
AGENTS = ["optimal", PPO]


@contextlib.contextmanager
def throwaway_postgres():
    """A PostgreSQL cluster in a temp folder on a free port of 127.0.0.1 (as ``postgres`` when run as root)."""
    bindir = postgres_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="yacht-bench-pg-"))
    if as_user:
        shutil.chown(folder, "postgres")
    port = free_port()

    def run(*command):
        done = subprocess.run([*as_user, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"{command[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    try:
        run(str(bindir / "initdb"), "-D", str(folder / "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(folder / "data"),
            "-l",
            str(folder / "log"),
            "-w",
            "-t",
            "60",
            "start",
            "-o",
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200",
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(folder, ignore_errors=True)


async def play_all(url: str, players: int, games: int, time_limit: float, think: float) -> list[Played]:
    played: list[Played] = []
    deadline = time.monotonic() + time_limit
    new_client = person_clients(url)

    async def person(n: int):
        chooser = Chooser(1.0, np.random.default_rng(n))
        pauses = np.random.default_rng(10_000 + n)
        pause = (lambda: pauses.exponential(think)) if think > 0 else None
        async with new_client() as client:  # its own connection, as each browser has
            for g in range(games):
                if time.monotonic() > deadline:
                    return
                agents = [] if n % 2 == 0 else [AGENTS[(n // 2 + g) % len(AGENTS)]]
                played.append(
                    await run_async(client, chooser, Played(f"load{n}", "table" if agents else "solitaire", agents), think=pause)
                )

    await asyncio.gather(*(person(n) for n in range(players)))
    return played


def run_loop(coroutine):
    """Run the players on uvloop where it is installed (the serve extra brings it): the client shares the
    machine with the server, and the less time it spends per request, the less of its own waiting is in
    the latency it measures.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def cpu_seconds(pid: int) -> float:
    """The user + system CPU seconds process ``pid`` has used so far (Linux ``/proc``; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def percentiles(values) -> str:
    if not values:
        return "-"
    p50, p95, p99 = np.percentile(np.array(values) * 1000, [50, 95, 99])
    return f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms (n={len(values)})"


def bench(db_url: str, label: str, players: int, games: int, time_limit: float, think: float, folder: Path) -> None:
    from yacht_play import store

    server = LocalServer(db_url, agents=",".join(AGENTS), log=folder / f"{label}.log", options=("--new-games-per-minute", "0"))
    server.start(timeout=300)
    try:
        server_cpu = cpu_seconds(server.process.pid)
        players_cpu = time.process_time()
        started = time.perf_counter()
        played = run_loop(play_all(server.url, players, games, time_limit, think))
        seconds = time.perf_counter() - started
        players_cpu = time.process_time() - players_cpu
        server_cpu = cpu_seconds(server.process.pid) - server_cpu
    finally:
        server.stop()
    counts = audit(store.connect(db_url), played)
    finished = sum(p.winners is not None for p in played)
    errors = [e for p in played for e in p.errors]
    human = [x for p in played for x in p.latencies]
    thinking = [x for p in played for x in p.agent_seconds]  # the requests in which agents moved
    print(
        f"[{label}] {players} people at once, {finished} games finished in {seconds:.1f} s: "
        f"{finished / seconds:.2f} games/s, {len(human) / seconds:.0f} actions/s"
    )
    print(f"[{label}] action latency, agents' thinking excluded: {percentiles(human)}")
    print(
        f"[{label}] the same, inside the server (Server-Timing: from the request reaching the app to its answer): "
        f"{percentiles([x for p in played for x in p.server_latencies])}"
    )
    print(
        f"[{label}] agents' thinking per request in which they moved (the policies' own time, commits excluded): "
        f"{percentiles(thinking)}"
    )
    print(
        f"[{label}] CPU: server {server_cpu:.1f} s ({server_cpu / max(len(human), 1) * 1000:.1f} ms per action), "
        f"players {players_cpu:.1f} s, over {seconds:.1f} s on {os.cpu_count()} cores; "
        f"load average at the end {os.getloadavg()[0]:.1f}"
    )
    print(
        f"[{label}] errors: {len(errors)}; retries: {sum(p.retries for p in played)}"
        + (f"; first: {errors[0]}" if errors else "")
    )
    print(f"[{label}] database audit: {counts}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=whole_number(), default=200, help="simulated people at once (default 200)")
    parser.add_argument("--games", type=whole_number(), default=1, help="games per person (default 1)")
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument(
        "--think",
        type=decimal_number(),
        default=2.0,
        metavar="S",
        help="mean seconds a person looks at the dice before each decision, drawn from an exponential "
        "distribution (default 2; 0: no pause, every person sends its next decision at once)",
    )
    parser.add_argument("--time-limit", type=decimal_number(), default=300.0, help="no new game after this many seconds")
    args = parser.parse_args()
    if not 1 <= args.players <= 1000 or not 1 <= args.games <= 100:
        parser.error("--players 1..1000 and --games 1..100")
    if not 0 <= args.think <= 60:
        parser.error(f"--think {args.think}: seconds 0..60")
    folder = Path(tempfile.mkdtemp(prefix="yacht-bench-serve-"))
    print(
        f"bench_serve: {args.players} people x {args.games} games, {args.think:g} s to think per decision "
        f"(mean), agents {', '.join(AGENTS)}; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    try:
        if args.db in ("sqlite", "both"):
            bench(str(folder / "bench.db"), "sqlite", args.players, args.games, args.time_limit, args.think, folder)
        if args.db in ("postgresql", "both"):
            with throwaway_postgres() as url:
                bench(url, "postgresql", args.players, args.games, args.time_limit, args.think, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
