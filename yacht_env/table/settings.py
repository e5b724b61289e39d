"""What the envs of a table of players share: the table arguments, the deal and the text view.

``YachtTable-v0`` (:mod:`yacht_env.table.env`) and the PettingZoo env (:mod:`yacht_env.table.pettingzoo_env`)
both derive from :class:`TableSettings`, which adds to the settings of every Yacht env
(:class:`yacht_env.settings.GameSettings`) the number of players, the reward mode, the table
observation and one :class:`~yacht_env.table.outcome.GameBatch` game.
"""

from __future__ import annotations

import numpy as np

from yacht_env.settings import GameSettings
from yacht_env.table.encoding import make_table_encoding
from yacht_env.table.outcome import (
    GameBatch,
    check_num_players,
    check_reward_mode,
    check_table_dice,
    draw_table_dice,
    render_table,
)

__all__ = ["TableSettings"]


class TableSettings(GameSettings):
    """The settings of an env that plays one game at a table of ``num_players`` seats.

    Call :meth:`_set_game_settings`, then :meth:`_set_table_settings`; a subclass names its
    seats in ``seat_names`` (the text view shows them).
    """

    seat_names: list[str]

    def _set_table_settings(self, num_players, reward_mode, low: int = 1):
        self.num_players = check_num_players(num_players, low=low)
        self.reward_mode = check_reward_mode(reward_mode)
        self.encoding = make_table_encoding(self.encoding.name, self.num_players, self.rules)
        self.tables = GameBatch(self.rules, self.num_players)

    def _given_faces(self, options: dict | None) -> np.ndarray | None:
        """``options["faces"]`` checked (one dice stream per seat), or None when not given."""
        faces = (options or {}).get("faces")
        return None if faces is None else check_table_dice(faces, self.rules, self.num_players)

    def _deal(self, faces: np.ndarray | None, np_random: np.random.Generator) -> None:
        """Start the game on ``faces``, else on every seat's dice drawn from ``np_random``."""
        if faces is None:
            faces = draw_table_dice(np_random, self.rules, self.num_players)
        self.tables.start(faces[None])
        self._started = True

    def _why_illegal(self, action: int, seat: int) -> str | None:
        """Why ``action`` is illegal for ``seat`` now, or None when it is legal."""
        hand, rolls_left, open_bits = (int(part[0]) for part in self.tables.position([0], [seat]))
        return self.layout.why_illegal(action, rolls_left, open_bits, hand)

    def _text(self) -> str:
        return render_table(self.tables, 0, self.seat_names)
