"""The ``yacht`` command: ``yacht play`` (a game in the terminal), ``yacht analyze`` (grade records), ``yacht serve``
(play in a browser), ``yacht export`` and ``yacht import`` (move games between a serve database and record files),
``yacht report`` (agents against people, from a serve database) and ``yacht simulate-players`` (bots that play a server).
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    """Run the ``yacht`` command; return its exit status."""
    from yacht_play import analyze, simulate
    from yacht_play import terminal as play
    from yacht_play.report import command as report
    from yacht_play.serve import cli as serve

    parser = argparse.ArgumentParser(
        prog="yacht", description="Yacht: play a game in the terminal or a browser, then grade it against the optimum."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    play.configure(commands.add_parser("play", help="play a game: solitaire, --vs agents, or --duplicate AGENT"))
    analyze.configure(commands.add_parser("analyze", help="grade recorded decisions against the optimal strategy"))
    serve.configure_serve(commands.add_parser("serve", help="play in a browser against agents, every decision in a database"))
    serve.configure_export(commands.add_parser("export", help="write the games of a serve database as record files (JSON lines)"))
    serve.configure_import(commands.add_parser("import", help="load record files from yacht play into a serve database"))
    report.configure(commands.add_parser("report", help="how the agents compare with the people in a serve database"))
    simulate.configure(commands.add_parser("simulate-players", help="simulated people playing a yacht serve through its API"))
    args = parser.parse_args(argv)
    from yacht_env.atomic_files import OutputError

    try:
        return args.run(args)
    except OutputError as error:  # every output file goes through the one writer, whose refusals are one line
        print(f"yacht {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
