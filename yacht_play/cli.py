"""The ``yacht`` command: ``yacht play`` (a game in the terminal) and ``yacht analyze`` (grade records)."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    from yacht_play import analyze
    from yacht_play import terminal as play

    parser = argparse.ArgumentParser(prog="yacht", description="Yacht in the terminal: play a game, then grade it against the optimum.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    play.configure(commands.add_parser("play", help="play a game: solitaire, --vs agents, or --duplicate AGENT"))
    analyze.configure(commands.add_parser("analyze", help="grade recorded decisions against the optimal strategy"))
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
