"""``yacht serve``, ``yacht export`` and ``yacht import``: the browser server and its database on the command line."""

from __future__ import annotations

import argparse
import gc
import sys

from yacht_env.echo import echoed
from yacht_env.option_values import decimal_number, whole_number
from yacht_play.options import DEFAULT_PORT, add_db_option, add_rules_option

BASELINE_AGENTS = ("random", "greedy", "optimal")  # offered by default on every install; the shipped models too with torch
NEW_GAMES_PER_MINUTE = 30  # as yacht_play.serve.app (not imported here: the extra may be missing)
# As yacht_play.serve.heads, which imports uvicorn: the bounds of a request's line and headers.
MAX_HEADER_BYTES, MAX_HEADERS, HEADER_TIMEOUT = 16 * 1024, 100, 10.0
BODY_TIMEOUT = 10.0  # as yacht_play.serve.app: seconds a request's body may take
EXTRA = "pip install 'yacht-rl[serve]'"


def need_extra(error: ImportError) -> int:
    """Say which extra a command needs; the exit status."""
    print(f"yacht: this command needs the serve extra ({error.name} is missing): {EXTRA}", file=sys.stderr)
    return 2


def configure_serve(parser: argparse.ArgumentParser) -> None:
    """The options of ``yacht serve``."""
    from agents.registry import or_list, policy_names, shipped_policies

    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 lets other machines in)",
    )
    parser.add_argument(
        "--port", type=whole_number(noun="a port", most=65535), default=DEFAULT_PORT, help="port (default %(default)s)"
    )
    add_db_option(
        parser,
        "database: an SQLite file (default %(default)s, created on first start) or a URL such as postgresql://user:password@host/dbname",
    )
    parser.add_argument(
        "--agents",
        help=f"comma-separated policies offered in the lobby: {or_list(policy_names())} (default: "
        f"{', '.join(BASELINE_AGENTS)} and the shipped models, {', '.join(shipped_policies())}, which need the train "
        "extra: without torch, the first three alone)",
    )
    add_rules_option(
        parser,
        "the lobby's rule set (a game may ask for any of {names}; its agents are loaded for it on its first game) "
        "(default %(default)s)",
        default="yacht",
    )
    parser.add_argument(
        "--new-games-per-minute",
        type=whole_number(),
        default=NEW_GAMES_PER_MINUTE,
        metavar="N",
        help="new games a client address may start in any minute; more get 429 (default %(default)s; 0: no limit)",
    )
    parser.add_argument(
        "--max-header-bytes",
        type=whole_number(least=1),
        default=MAX_HEADER_BYTES,
        metavar="N",
        help="most bytes of a request's line and headers; more gets 431 (default %(default)s)",
    )
    parser.add_argument(
        "--max-headers",
        type=whole_number(least=1),
        default=MAX_HEADERS,
        metavar="N",
        help="most headers of a request; more gets 431 (default %(default)s)",
    )
    parser.add_argument(
        "--header-timeout",
        type=decimal_number(noun="a number of seconds"),
        default=HEADER_TIMEOUT,
        metavar="SECONDS",
        help="seconds a request's line and headers may take to arrive; a slower client gets 408 and is let go "
        "(default %(default)g)",
    )
    parser.add_argument(
        "--body-timeout",
        type=decimal_number(noun="a number of seconds"),
        default=BODY_TIMEOUT,
        metavar="SECONDS",
        help="seconds a request's body may take to arrive once its headers are read; a slower one gets 408 (default %(default)g)",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        default="",
        metavar="IPS",
        help="comma-separated addresses or networks of the reverse proxies in front of the server, whose "
        "X-Forwarded-For and X-Forwarded-Proto headers are believed (the client address they name is the one "
        "the new-game limit counts); '*' trusts every peer. Default none: the headers are ignored and the limit "
        "counts the connecting address, since anyone can invent the headers",
    )
    parser.set_defaults(run=run_serve)


def configure_export(parser: argparse.ArgumentParser) -> None:
    """The options of ``yacht export``."""
    add_db_option(parser, "database file or URL (default %(default)s)")
    parser.add_argument("-o", "--output", default="-", help="record file to write, JSON lines (default: standard output)")
    parser.add_argument("--finished", action="store_true", help="only games that ended")
    parser.set_defaults(run=run_export)


def configure_import(parser: argparse.ArgumentParser) -> None:
    """The options of ``yacht import``."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="record files written by yacht play")
    add_db_option(parser, "database file or URL (default %(default)s)")
    parser.set_defaults(run=run_import)


def parse_agents(text: str) -> list[str]:
    """The policy names of ``--agents``."""
    return [name.strip() for name in text.split(",") if name.strip()]


def default_agents() -> list[str]:
    """The agents offered when ``--agents`` is not given: the baselines and every shipped model, or, where the
    models cannot be read (no torch: the serve extra without the train extra), the baselines alone, said in one line.
    """
    from agents.registry import can_read_model_files, shipped_policies

    if can_read_model_files():
        return [*BASELINE_AGENTS, *shipped_policies()]
    print(
        f"yacht serve: the shipped models ({', '.join(shipped_policies())}) need the train extra (torch): "
        f"offering {', '.join(BASELINE_AGENTS)}; pip install 'yacht-rl[train]' adds them",
        file=sys.stderr,
    )
    return list(BASELINE_AGENTS)


def forwarded_allow_ips(text: str) -> list[str]:
    """The proxies of ``--forwarded-allow-ips``: addresses, networks or ``*``; ``ValueError`` naming a bad one."""
    import ipaddress

    proxies = [item.strip() for item in text.split(",") if item.strip()]
    for item in proxies:
        if item != "*":
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(
                    f"--forwarded-allow-ips: {echoed(item)} is not an IP address or network (e.g. 10.0.0.1, 10.0.0.0/8, ::1, *)"
                ) from None
    return proxies


def head_limits(args):
    """The request-head bounds of ``--max-header-bytes``, ``--max-headers`` and ``--header-timeout``; ``ValueError``
    naming a bad one.
    """
    import math

    from yacht_play.serve.heads import HeadLimits

    for option, value in (
        ("--max-header-bytes", args.max_header_bytes),
        ("--max-headers", args.max_headers),
        ("--header-timeout", args.header_timeout),
        ("--body-timeout", args.body_timeout),
    ):
        if not value > 0 or math.isinf(value):
            raise ValueError(f"{option} {value:g} is not above 0 (and finite)")
    return HeadLimits(args.max_header_bytes, args.max_headers, args.header_timeout)


def run_serve(args) -> int:
    """Open the database, load the agents, serve until Ctrl-C."""
    try:
        import uvicorn

        from yacht_play import store
        from yacht_play.serve.app import SECURITY_HEADERS, create_app
        from yacht_play.serve.games import GameService
        from yacht_play.serve.heads import head_limited
    except ImportError as error:
        return need_extra(error)
    try:
        proxies = forwarded_allow_ips(args.forwarded_allow_ips)
        limits = head_limits(args)
    except ValueError as error:
        print(f"yacht serve: {error}", file=sys.stderr)
        return 2
    try:
        engine = store.connect(args.db)
        agents = default_agents() if args.agents is None else parse_agents(args.agents)
        print(f"yacht serve: loading agents {', '.join(agents) or '(none)'} ...", file=sys.stderr, flush=True)
        service = GameService(engine, agents, rules=args.rules)
    except (store.DatabaseError, ValueError) as error:
        print(f"yacht serve: {error}", file=sys.stderr)
        return 2
    # The agents and the DP tables loaded above are some 300,000 objects that live as long as the
    # server: kept out of the garbage collector, or every full collection walks them all (pauses of
    # a few hundred ms under load, every request waiting).
    gc.collect()
    gc.freeze()
    where = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    print(
        f"yacht serve: database {store.shown_url(engine.url.render_as_string(hide_password=False))}; "
        f"open http://{where}:{args.port}/ in a browser (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise: behind no proxy, a local client
    # would then get a fresh new-game quota for every address it invents. Only the proxies named are believed.
    uvicorn.run(
        create_app(service, args.new_games_per_minute, args.body_timeout),
        host=args.host,
        port=args.port,
        log_level="warning",
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
        http=head_limited(limits, SECURITY_HEADERS),
    )
    return 0


def run_export(args) -> int:
    """Write every game of the database (or the finished ones) as record lines."""
    try:
        from yacht_play import store
    except ImportError as error:
        return need_extra(error)
    import json

    missing = store.missing_database(args.db)
    if missing:
        print(f"yacht export: {missing}", file=sys.stderr)
        return 2
    try:
        with store.database_errors(store.database_url(args.db)):  # a corrupted file: one line, not a traceback
            games = store.all_games(store.connect(args.db), finished_only=args.finished)
    except store.DatabaseError as error:
        print(f"yacht export: {error}", file=sys.stderr)
        return 2
    lines = [json.dumps(record, separators=(",", ":")) + "\n" for game in games for record in game.lines()]
    if args.output == "-":
        sys.stdout.writelines(lines)
    else:
        from yacht_env.atomic_files import write_atomically

        write_atomically(args.output, lambda handle: handle.writelines(line.encode() for line in lines))
        print(
            f"yacht export: {len(games)} games, {sum(len(g.decisions) for g in games)} decisions -> {args.output}",
            file=sys.stderr,
        )
    return 0


def run_import(args) -> int:
    """Load record files into the database, all or nothing; games already there are skipped."""
    try:
        from yacht_play import store
        from yacht_play.serve.games import GameService, Refused
    except ImportError as error:
        return need_extra(error)
    from sqlalchemy.exc import SQLAlchemyError

    from yacht_play.match import load_games
    from yacht_play.records import RecordError

    try:
        engine = store.connect(args.db)
        files = [load_games(path) for path in args.files]  # every game replayed here, so errors name file:line
    except (store.DatabaseError, RecordError) as error:
        print(f"yacht import: {error}; nothing was imported", file=sys.stderr)
        return 2
    service = GameService(engine, [])
    added, skipped, where = 0, 0, ", ".join(args.files)
    seen: set[str] = set()
    try:
        with store.all_or_nothing(engine):
            for file in files:
                for game in file.games:
                    where = f"{file.path}:{game.line_numbers[0]}"
                    fresh = game.game_id not in seen and service.import_game(game)
                    seen.add(game.game_id)
                    added, skipped = added + fresh, skipped + (not fresh)
    except Refused as error:
        print(f"yacht import: {where}: {error}; nothing was imported", file=sys.stderr)
        return 2
    except SQLAlchemyError as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"yacht import: the database refused the import ({detail}); nothing was imported", file=sys.stderr)
        return 2
    marked = " (marked imported: yacht report counts them with --include-imported)" if added else ""
    print(f"yacht import: {added} games added, {skipped} already in the database{marked}", file=sys.stderr)
    return 0
