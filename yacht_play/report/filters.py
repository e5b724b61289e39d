"""Which games a report covers (:class:`Filters`), and the checks of a filter's text as the command line and the
server's query string give it (a date, a mode a person plays).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from yacht_env.echo import echoed
from yacht_env.safe_text import unsafe_character
from yacht_play.records import HUMAN_MODES, GameRecord


@dataclass(frozen=True)
class Filters:
    """Which games a report covers; ``since``/``until`` compare with the game's start (ISO 8601, UTC)."""

    since: str | None = None
    until: str | None = None
    mode: str | None = None
    player: str | None = None
    rules: str | None = None  # the rule set; None: the one the games share
    include_imported: bool = False  # games yacht import brought in from record files count too

    def keep(self, game: GameRecord) -> bool:
        """Whether ``game`` passes the filters (an imported game only with ``include_imported``)."""
        return self.keep_played(game) and (self.include_imported or not game.imported)

    def keep_played(self, game: GameRecord) -> bool:
        """Whether ``game`` passes the filters other than ``include_imported``."""
        started = game.header.get("time") or ""
        if self.since and started < self.since:
            return False
        if self.until and started >= self.until:
            return False
        if self.mode and game.header["mode"] != self.mode:
            return False
        if self.player and self.player not in [p["name"] for p in game.players if p["kind"] == "human"]:
            return False
        if self.rules and game.header["rules"] != self.rules:
            return False
        return True

    def named_values(self) -> list[tuple[str, str | bool | None]]:
        """Each filter's name and value, in the order the report writes them."""
        return [(field.name, getattr(self, field.name)) for field in fields(self)]


def check_date(option: str, text: str | None) -> str | None:
    """``text`` if it is an ISO 8601 date (or None), else ``ValueError`` naming ``option``."""
    from datetime import datetime

    if text is None:
        return None
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{option} {echoed(text)} is not a date; use ISO 8601, e.g. 2026-11-01 or 2026-11-01T14:00") from None
    return text


def check_mode(option: str, text: str | None) -> str | None:
    """``text`` if it is a mode a person plays (or None), else ``ValueError`` naming ``option`` and the modes."""
    if text is not None and text not in HUMAN_MODES:
        raise ValueError(f"{option} {echoed(text)} is not a mode; choose one of {', '.join(HUMAN_MODES)}")
    return text


def check_player(option: str, text: str | None) -> str | None:
    """``text`` if it could be a player's name (or None), else ``ValueError`` naming ``option``: no name holds a
    control character or a lone surrogate (which is what bytes that are not UTF-8 become on a command line).
    """
    problem = None if text is None else unsafe_character(text)
    if problem:
        raise ValueError(f"{option} {echoed(text)}: {problem}, which no player's name holds (names are UTF-8 text)")
    return text
