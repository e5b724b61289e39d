"""Options that several ``yacht`` commands take, declared once: ``--db`` (the store of games) and ``--rules``.

Only the standard library and the rule sets are imported here, so that every command's ``--help`` works
without the serve extra.
"""

from __future__ import annotations

import argparse

from yacht_env.rules import RULE_SETS

DEFAULT_DB = "yacht.db"  # the store of games yacht serve creates on its first start
# yacht serve's port, and where yacht simulate-players looks for it; not 8000: that is where `mkdocs serve` shows the
# documentation, which one may read beside the game.
DEFAULT_PORT = 8080


def add_db_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--db``: the store of games, an SQLite file (default ``DEFAULT_DB``) or a URL; ``%(default)s`` in ``help_text``
    stands for the default.
    """
    parser.add_argument("--db", default=DEFAULT_DB, help=help_text)


def add_rules_option(parser: argparse.ArgumentParser, help_text: str, default: str | None = None) -> None:
    """``--rules NAME``, a name of ``RULE_SETS``; ``{names}`` in ``help_text`` stands for the names."""
    parser.add_argument(
        "--rules", default=default, choices=list(RULE_SETS), metavar="NAME", help=help_text.format(names=", ".join(RULE_SETS))
    )
