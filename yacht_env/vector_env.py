"""The natively vectorized Gymnasium env behind ``gymnasium.make_vec("Yacht-v0", ...)``.

:class:`YachtVectorEnv` keeps N games in flat arrays and advances all of them with one numba
kernel, reading the same rule tables as :class:`~yacht_env.env.YachtEnv` (hand scores, dice codes,
re-roll ranks, legal-action masks), so both envs play one rule book. Sub-env ``i`` reset with seed
``s + i`` replays ``YachtEnv().reset(seed=s + i)`` exactly, game after game: each sub-env owns a
generator, and the games that end in a step draw their next dice from their own generators in
one compiled call that is checked, when the env is built, to draw what ``draw_game_dice`` draws.

:func:`sample_legal_actions` draws one uniformly random legal action per row of a batch of masks,
the quick way to play random games or to explore with a masked policy.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, iterate
from numba import njit
from typing_extensions import Unpack

from yacht_env import render_rgb
from yacht_env.game import GameBatch, advance, check_game_dice, compiled_call, draw_game_dice, gather_masks
from yacht_env.illegal import penalize
from yacht_env.render import render_position
from yacht_env.rules import RuleSet, cached_per_rules
from yacht_env.settings import GameArguments, GameOverError, GameSettings

__all__ = ["YachtVectorEnv", "check_actions", "sample_legal_actions"]


# -- numba kernels over plain arrays, one loop iteration per game -----------------------------


@njit(cache=True)
def _settle(points, legal, over, illegal_counts, penalty, max_illegal_actions, rewards, terminated, truncated, illegal):
    """What ``YachtEnv.step`` makes of each game's transition: reward, episode end, illegal count.

    An illegal action is answered by :func:`yacht_env.illegal.penalize`, as in every env.
    """
    for i in range(points.shape[0]):
        illegal[i] = not legal[i]
        terminated[i] = legal[i] and over[i]  # a game is reset in the step that ends it, so over means "just ended"
        if legal[i]:
            rewards[i] = points[i]
            truncated[i] = False
        else:
            illegal_counts[i], rewards[i], truncated[i] = penalize(illegal_counts[i], penalty, max_illegal_actions)


@njit(cache=True)
def _first_out_of_range(actions, num_actions):
    """Index of the first action outside ``0..num_actions - 1``, or -1."""
    for i in range(actions.shape[0]):
        if actions[i] < 0 or actions[i] >= num_actions:
            return i
    return -1


@njit(cache=True)
def _pick_legal(masks, uniforms, out):
    """``out[i]`` = the legal action of row ``i`` chosen by ``uniforms[i]``; index of a row with none, or -1."""
    num_actions = masks.shape[1]
    legal = np.empty(num_actions, dtype=np.int64)
    for i in range(masks.shape[0]):
        # Branch-free gather of the legal actions: each is written, and kept only if the mask allows it.
        count = 0
        for action in range(num_actions):
            legal[count] = action
            count += masks[i, action] != 0
        if count == 0:
            return i
        # floor(u * count) is uniform on 0..count-1; the clamp guards against rounding up as u -> 1
        out[i] = legal[min(int(uniforms[i] * count), count - 1)]
    return -1


@njit(cache=True)
def _draw_games(next_uint32, state_addresses, games, faces, num_faces):
    """``faces[i] = draw_game_dice(generator_i, rules)`` for each ``i`` in ``games``, compiled.

    Replays NumPy's ``Generator.integers(1, num_faces + 1, dtype=np.int8)``: bytes taken low to
    high from 32-bit draws of the generator's own bit generator (``next_uint32`` on the state at
    ``state_addresses[i]``), each mapped to a face by Lemire's multiply-and-reject method, the
    byte buffer starting empty on every call. :func:`_compiled_draw` checks the result
    against ``draw_game_dice`` before an env relies on it.
    """
    span = num_faces  # faces 1..num_faces, as bytes 0..num_faces - 1
    threshold = (256 - span) % span  # bytes whose products fall short of this are redrawn
    for i in games:
        dice = faces[i].reshape(-1)
        state = state_addresses[i]
        buffer = np.uint32(0)
        bytes_left = 0
        for k in range(dice.shape[0]):
            while True:
                if bytes_left == 0:
                    buffer = next_uint32(state)
                    bytes_left = 3
                else:
                    buffer >>= np.uint32(8)
                    bytes_left -= 1
                product = (buffer & 0xFF) * span
                if (product & 0xFF) >= threshold:
                    break
            dice[k] = 1 + (product >> 8)


class CompiledDraw(NamedTuple):
    """What :func:`_compiled_draw` found: whether the compiled draw can be used, and with what."""

    exact: bool  # _draw_games draws what draw_game_dice draws
    bit_generator_type: type | None  # the bit generator type that holds for
    next_uint32: Any  # that type's next_uint32, which _draw_games calls


@cached_per_rules
def _compiled_draw(rules: RuleSet) -> CompiledDraw:
    """Whether :func:`_draw_games` draws exactly what ``draw_game_dice`` draws for gymnasium's generators.

    Returns the verdict, the bit generator type it holds for and that type's ``next_uint32``.
    Four games on twin generators are compared, face for face and state after state, so a NumPy
    that samples differently (or a dice range the compiled draw does not cover) is caught here
    and the env falls back to calling ``draw_game_dice`` per game. Checked once per rule set.
    """
    probe, _ = seeding.np_random(20240229)
    twin = np.random.Generator(type(probe.bit_generator)())
    twin.bit_generator.state = probe.bit_generator.state
    expected = np.stack([draw_game_dice(probe, rules) for _ in range(4)])
    if expected.dtype != np.int8 or not 2 <= rules.num_faces <= 127:
        return CompiledDraw(False, None, None)
    faces = np.zeros_like(expected)
    addresses = np.full(len(faces), twin.bit_generator.ctypes.state_address, dtype=np.uint64)
    next_uint32 = twin.bit_generator.ctypes.next_uint32
    _draw_games(next_uint32, addresses, np.arange(len(faces)), faces, rules.num_faces)
    exact = np.array_equal(faces, expected) and twin.bit_generator.state == probe.bit_generator.state
    return CompiledDraw(exact, type(probe.bit_generator), next_uint32)


# -- pure helpers ------------------------------------------------------------------------------


def sample_legal_actions(masks, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks``, as int64 of shape (N,).

    ``masks`` is (N, num_actions), bool or 0/1 integers (``infos["action_mask"]`` or
    ``action_masks()``). Uses one ``rng.random(N)`` draw, so a seeded ``rng`` gives reproducible
    actions. Raises ``ValueError`` if a row has no legal action.
    """
    masks = np.asarray(masks)
    if masks.ndim != 2 or masks.dtype.kind not in "biu":
        raise ValueError(f"masks must be a 2-D bool or integer array (N, num_actions), got {masks.dtype} {masks.shape}")
    actions = np.empty(masks.shape[0], dtype=np.int64)
    empty_row = _pick_legal(masks, rng.random(masks.shape[0]), actions)
    if empty_row >= 0:
        raise ValueError(f"row {empty_row} of masks has no legal action")
    return actions


def check_actions(actions, num_envs: int, num_actions: int) -> np.ndarray:
    """The actions as an int64 array of shape (num_envs,), or ``ValueError`` naming what is wrong.

    The batched counterpart of :func:`yacht_env.env.check_action`: integers only (no bools, no
    floats, even whole ones), exactly one per sub-env, each in ``0..num_actions - 1``.
    """
    allowed = f"an integer array of shape ({num_envs},) with values in 0..{num_actions - 1}"
    if isinstance(actions, (list, tuple)) and any(isinstance(a, (bool, np.bool_)) for a in actions):
        raise ValueError(f"actions must be {allowed}, got a bool in {actions!r}")  # numpy would read True as 1
    try:
        array = np.asarray(actions)
    except ValueError:  # ragged nested sequences
        raise ValueError(f"actions must be {allowed}, got {actions!r}") from None
    if array.dtype.kind not in "iu":
        raise ValueError(f"actions must be {allowed}, got dtype {array.dtype}: {actions!r}")
    if array.shape != (num_envs,):
        raise ValueError(f"actions must be {allowed}, got shape {array.shape}")
    # A uint64 too large for int64 wraps to a negative value, so the range check still catches it.
    values = array.astype(np.int64, copy=False)
    bad = _first_out_of_range(values, num_actions)
    if bad >= 0:
        raise ValueError(
            f"actions[{bad}] = {array[bad]} is not in the action space: expected integers in 0..{num_actions - 1} "
            f"(Discrete({num_actions}) per sub-env)"
        )
    return values


def _seed_list(seed, num_envs: int) -> list:
    """Gymnasium's vector seeding: None -> no seeds, int s -> s, s+1, ..., or one seed per sub-env."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        return [int(seed) + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"seed must be None, an int or a list of {num_envs} seeds (one per sub-env), got {len(seeds)}")
    return seeds


class YachtVectorEnv(GameSettings, VectorEnv):
    """## Description
    ``num_envs`` independent games of solitaire Yacht (``Yacht-v0``, rules in ``RULES.md``) played
    in lockstep: one ``step`` call advances every game with one compiled loop over plain arrays.
    Each sub-env follows exactly the rules, observations, rewards, infos and illegal-action handling
    of :class:`~yacht_env.env.YachtEnv`; with the same seeds and actions the two are
    indistinguishable, step for step. Created by
    ``gymnasium.make_vec("Yacht-v0", num_envs=N)`` (or ``vectorization_mode="vector_entry_point"``).

    ## Action Space
    ``MultiDiscrete([44] * num_envs)``: one ``Discrete(44)`` action per sub-env, with the layout of
    ``YachtEnv`` (``1..31`` re-roll the dice whose bit is set, ``32 + c`` scores category ``c``,
    ``0`` is never legal). ``step`` takes an integer array of shape ``(num_envs,)``; anything else
    (wrong shape, floats, bools, a value outside ``0..43``) raises ``ValueError`` and changes nothing.

    ## Observation Space
    The single env's observation, chosen by ``observation_encoding``, batched along a first axis of
    size ``num_envs`` (``single_observation_space`` is the single env's). The default ``"flat"`` is
    ``Box(0, 6, (num_envs, 18), float32)``; ``"dict"`` is a ``Dict`` of batched ``dice``,
    ``rolls_left`` and ``open_categories``.

    ## Rewards
    Per sub-env, as in ``YachtEnv``: the points written by a scoring action, 0 for a re-roll and
    ``-illegal_action_penalty`` for an ignored illegal action. Returned as float64 of shape (N,).

    ## Starting State
    In every sub-env all categories open, turn 1, the first roll made (rolls left 2).

    ## Episode End
    A sub-env ``terminates`` after its 12th scoring action and is ``truncated`` after
    ``max_illegal_actions`` illegal actions in one episode.

    ## Autoreset
    ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``: a sub-env that terminates or
    truncates is reset inside the same ``step``, and the returned observation and infos of that
    sub-env already belong to its next game (turn 1, total 0). Its last observation and info are in
    ``infos["final_obs"]`` (an object array holding each ended sub-env's single-env observation,
    ``None`` elsewhere) and ``infos["final_info"]`` (a dict of batched info arrays), with the masks
    ``infos["_final_obs"]`` and ``infos["_final_info"]`` (and ``final_info["_<key>"]``) marking the
    ended sub-envs. The keys appear only in steps where some sub-env ended. The next game's dice
    come from the sub-env's own generator, as ``YachtEnv.reset()`` without a seed would draw them.

    ## Information
    Batched as gymnasium's vector envs batch single-env infos, each key with a ``"_<key>"`` bool
    mask of the sub-envs that have it: ``action_mask`` (int8, (N, 44)), ``total`` (int64),
    ``turn`` (int64, 1..12), ``illegal_action`` (bool) and, in steps with an illegal action that
    did not end its episode, ``illegal_reason`` (object array of str). ``action_masks()`` returns the
    current masks as bool, shape (N, 44), for sb3-contrib's ``MaskablePPO``.

    ## Arguments
    - ``num_envs``: the number of games played in parallel.
    - ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns a list with each game's text) or
      ``"rgb_array"`` (a list with each game's frame, as ``YachtEnv`` draws it; needs Pillow).
    - ``rules``: a ``RuleSet`` or the name of one in ``yacht_env.rules.RULE_SETS`` (default
      ``yacht_env.YACHT``, the rules of ``RULES.md``); rewards then include the rules' bonuses.
    - ``observation_encoding``: a name in ``yacht_env.encoding.ENCODINGS``, as for ``YachtEnv``
      (``"flat"`` by default).
    - ``illegal_action``: ``"penalize"`` (default: the action is ignored, reported in the infos and
      costs ``illegal_action_penalty``) or ``"raise"`` (``IllegalActionError``, a ``ValueError``,
      naming the first offending sub-env; no sub-env moves).
    - ``illegal_action_penalty``: points subtracted for an ignored illegal action (default 1.0).
    - ``max_illegal_actions``: illegal actions in one episode before it is truncated (default 100).

    ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (a list gives one seed per sub-env), each
    with its own generator; ``options={"reset_mask": mask}`` resets only the sub-envs marked in a
    bool array of shape (N,), as in gymnasium's ``SyncVectorEnv``; ``options={"faces": table}``
    plays given dice (one (12, 3, 5) table for all, or (N, 12, 3, 5)) as ``YachtEnv.reset`` does.

    Returned arrays are fresh on every call and may be kept; the env never writes to them again.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4, "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        **settings: Unpack[GameArguments],
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self._set_game_settings(render_mode, **settings)
        self.num_envs = int(num_envs)
        self.single_action_space = spaces.Discrete(self.layout.num_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = self.encoding.space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        # The games live in a GameBatch of one seat each; the shared transition steps them all.
        n = self.num_envs
        self._game = GameBatch(self.rules, num_players=1, num_tables=n)
        self._actions = np.zeros(n, dtype=np.int64)  # the transition reads each step's actions from here
        self._points = np.zeros(n, dtype=np.int64)
        self._legal = np.zeros(n, dtype=bool)
        self._bind_game_views()
        self._illegal_counts = np.zeros(n, dtype=np.int64)
        self._illegal = np.zeros(n, dtype=bool)  # scratch: which games just played an illegal action
        self._last_rerolls: dict[int, tuple[int, int]] = {}  # frames only: game -> (hand before, re-roll mask)

        self._np_randoms: list[np.random.Generator | None] = [None] * n
        self._np_random_seeds: list[int | None] = [None] * n
        # Where each generator's bit generator keeps its state, for drawing dice in compiled code;
        # 0 where a game's dice must be drawn by draw_game_dice itself.
        self._state_addresses = np.zeros(n, dtype=np.uint64)
        self._draw_compiled, self._compiled_bit_generator, self._next_uint32 = _compiled_draw(self.rules)
        self._started = False

    # -- gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        """Start a new game in every sub-env (or in those of ``options["reset_mask"]``).

        ``options["faces"]`` plays given dice instead of drawing them, as in ``YachtEnv.reset``:
        one table of shape (turns, rolls per turn, dice) for every sub-env, or one per sub-env.
        """
        seeds = _seed_list(seed, self.num_envs)
        reset_mask = self._reset_mask(options)
        faces = self._check_faces((options or {}).get("faces"))
        if not self._started and not reset_mask.all():
            raise ValueError("the first reset() must start every sub-env; call it without options['reset_mask']")
        games = np.flatnonzero(reset_mask).tolist()
        # Every seed is checked (by seeding.np_random) before any sub-env changes.
        seeded = {i: seeding.np_random(seeds[i]) for i in games if seeds[i] is not None}
        for i in games:
            if i in seeded:
                self._set_generator(i, *seeded[i])
            self._faces[i, 0] = draw_game_dice(self._generator(i), self.rules) if faces is None else faces[i]
        self._start(np.array(games, dtype=np.int64))
        self._last_rerolls = {i: last for i, last in self._last_rerolls.items() if not reset_mask[i]}
        self._started = True
        # Sub-envs left running report no info, as in gymnasium's SyncVectorEnv.
        return self._observations(), self._infos(reset_mask)

    def step(self, actions):
        """Play one action in every sub-env; ended sub-envs restart at once (see ``Autoreset``)."""
        if not self._started:
            raise GameOverError("reset() was never called; call reset() before step()")
        actions = check_actions(actions, self.num_envs, self.layout.num_actions)
        judge = self.illegal_judge
        if judge.illegal_action == "raise":  # refused before any game moves
            illegal_now = np.flatnonzero(self._masks()[np.arange(self.num_envs), actions] == 0)
            if len(illegal_now):
                first = int(illegal_now[0])
                judge.refuse(f"sub-env {first}: {self._why_illegal(first, actions[first])}")

        n = self.num_envs
        hands_before = self._hands.copy() if self.render_mode == "rgb_array" else None
        rewards = np.empty(n, dtype=np.float64)
        terminated = np.empty(n, dtype=bool)
        truncated = np.empty(n, dtype=bool)
        illegal = self._illegal
        self._actions[:] = actions
        self._advance(*self._advance_args)
        _settle(
            self._points,
            self._legal,
            self._game.over,
            self._illegal_counts,
            judge.illegal_action_penalty,
            judge.max_illegal_actions,
            rewards,
            terminated,
            truncated,
            illegal,
        )

        reasons = {}
        if illegal.any():
            # The state an illegal action leaves is the state it was judged in.
            reasons = {int(i): self._why_illegal(i, actions[i]) for i in np.flatnonzero(illegal)}
        ended = terminated | truncated
        if hands_before is not None:  # the dice each game's frame shows as held
            rerolled = ~illegal & ~ended & (actions < self.layout.first_score_action)
            # an ignored action changes nothing
            kept = {i: last for i, last in self._last_rerolls.items() if illegal[i] and not ended[i]}
            self._last_rerolls = kept | {int(i): (int(hands_before[i]), int(actions[i])) for i in np.flatnonzero(rerolled)}
        final = self._finish(np.flatnonzero(ended), illegal, reasons) if ended.any() else {}

        # An ended sub-env reports its new game's info, in which no illegal action was played yet.
        infos = self._infos(np.ones(n, dtype=bool), illegal & ~ended)
        reasons = {i: reason for i, reason in reasons.items() if not ended[i]}
        if reasons:
            infos["illegal_reason"], infos["_illegal_reason"] = self._object_info(reasons)
        infos.update(final)
        return self._observations(), rewards, terminated, truncated, infos

    def render(self) -> list[str] | list[np.ndarray] | None:  # type: ignore[override]  # a list, one frame per sub-env
        """Each sub-env's position as text (``render_mode="ansi"``) or a picture (``"rgb_array"``), in sub-env order."""
        if not self._can_render("games"):
            return None
        if self.render_mode == "rgb_array":
            turns = self._turn_numbers().tolist()
            return [self._game_frame(i, sheet, turn) for i, (sheet, turn) in enumerate(zip(self.sheets, turns))]
        return [
            render_position(
                self.rules,
                self.rules.dice.hands[self._hands[i]],
                int(self._rolls_left[i]),
                sheet,
                turn,
                total=int(self._totals[i]),
            )
            for i, (sheet, turn) in enumerate(zip(self.sheets, self._turn_numbers().tolist()))
        ]

    def _game_frame(self, i: int, sheet, turn: int) -> np.ndarray:
        """Game ``i``'s picture, the dice its last re-roll kept marked as held."""
        dice = self.rules.dice.hands[self._hands[i]]
        held = None
        if i in self._last_rerolls:
            hand, mask = self._last_rerolls[i]
            held = render_rgb.held_dice(self.rules.dice.hands[hand], mask, dice)
        rolls_left = int(self._rolls_left[i])
        return render_rgb.render_frame(
            self.rules, dice, rolls_left, self.sheets[i], turn, held=held, title=f"game {i}", total=int(self._totals[i])
        )

    def action_masks(self) -> np.ndarray:
        """Legal actions of every sub-env as bool, shape (num_envs, num_actions) (the sb3-contrib convention)."""
        return self._masks().view(bool)

    @property  # type: ignore[misc]  # read-only: one generator per sub-env, as SyncVectorEnv's
    def np_random(self) -> tuple[np.random.Generator | None, ...]:  # type: ignore[override]  # per sub-env, as SyncVectorEnv's
        """Each sub-env's generator (the one its dice are drawn from), as ``SyncVectorEnv`` reports them."""
        return tuple(self._np_randoms)

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:  # type: ignore[override]  # per sub-env, as SyncVectorEnv's
        """Each sub-env's seed (as ``gymnasium.utils.seeding.np_random`` reported it; None before a reset)."""
        return tuple(self._np_random_seeds)

    # -- read-only view of the games -----------------------------------------------------------

    @property
    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(hand indices, rolls left, open bit sets)`` of every sub-env, copies of shape (N,)."""
        return self._hands.copy(), self._rolls_left.copy(), self._open.copy()

    @property
    def sheet_state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(upper subtotals, Yahtzee box full 0/1)`` of every sub-env (see ``YachtEnv.sheet_state``)."""
        return self._game.sheet_state(self._game.all_tables, np.zeros(self.num_envs, dtype=np.int64))

    @property
    def dice(self) -> np.ndarray:
        """Every sub-env's dice, sorted ascending, shape (N, num_dice)."""
        return self.rules.dice.hands[self._hands]

    @property
    def total(self) -> np.ndarray:
        """Every sub-env's points so far, bonuses included, shape (N,)."""
        return self._totals.copy()

    @property
    def turn(self) -> np.ndarray:
        """The 1-based turn each sub-env is playing."""
        return self._turn_numbers()

    @property
    def sheets(self) -> list[tuple[int | None, ...]]:
        """Each sub-env's sheet: points written in each category, None where still open."""
        return [self._game.sheet(i, 0) for i in range(self.num_envs)]

    # -- copying -------------------------------------------------------------------------------

    def __getstate__(self):
        # Raw state addresses point into this object's generators, and ctypes function pointers
        # cannot be copied: a copy (copy.deepcopy, pickle) finds its own on arrival.
        state = self.__dict__.copy()
        state["_state_addresses"] = np.zeros_like(self._state_addresses)
        state["_next_uint32"] = None
        del state["_advance"]  # machine code does not pickle either
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind_game_views()  # a copied view no longer shares memory with the copied game
        self._draw_compiled, self._compiled_bit_generator, self._next_uint32 = _compiled_draw(self.rules)
        for i, generator in enumerate(self._np_randoms):
            if generator is not None:
                self._set_generator(i, generator, self._np_random_seeds[i])

    # -- internals -----------------------------------------------------------------------------

    def _bind_game_views(self):
        """Flat per-game views of the one-seat game arrays, and the transition's arguments."""
        game = self._game
        # The transition's arguments are the same arrays at every step, so its machine code is bound once.
        self._advance_args = (game.all_tables, self._actions, game.state, game.arrays, self._points, self._legal)
        self._advance = compiled_call(advance, *self._advance_args)
        arrays = game.arrays
        self._mask_args = (arrays.legal_masks, arrays.alike_faces, arrays.sheet_rules)
        self._hands, self._rolls_left, self._open = (a.reshape(-1) for a in (game.hands, game.rolls_left, game.open_bits))
        self._totals = game.totals.reshape(-1)
        self._turns = game.turns_done.reshape(-1)  # rows filled so far
        self._faces = game.faces

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray:
        if options is None or "reset_mask" not in options:
            return np.ones(self.num_envs, dtype=bool)
        mask = options["reset_mask"]
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got {mask!r}")
        if not mask.any():
            raise ValueError("options['reset_mask'] must mark at least one sub-env to reset")
        return mask

    def _check_faces(self, faces) -> np.ndarray | None:
        """``options["faces"]`` as one int8 table per sub-env, or ``ValueError`` naming what is wrong."""
        if faces is None:
            return None
        table_shape = self._faces.shape[2:]
        all_shape = (self.num_envs, *table_shape)
        array = np.asarray(faces)
        if array.shape == table_shape:
            return np.broadcast_to(check_game_dice(array, self.rules), all_shape)
        if array.shape == all_shape:
            return np.stack([check_game_dice(table, self.rules) for table in array])
        raise ValueError(
            f"options['faces'] must be one dice stream of shape {table_shape} or one per sub-env, shape "
            f"{all_shape}; got shape {array.shape}"
        )

    def _generator(self, i: int) -> np.random.Generator:
        """Sub-env ``i``'s generator, made unseeded on first use as ``gymnasium.Env.np_random`` does."""
        generator = self._np_randoms[i]
        if generator is None:
            generator, seed = seeding.np_random()
            self._set_generator(i, generator, seed)
        return generator

    def _set_generator(self, i: int, generator: np.random.Generator, seed: int):
        # The state address is only valid while the generator is alive, so both change together.
        self._np_randoms[i], self._np_random_seeds[i] = generator, seed
        compiled = self._draw_compiled and type(generator.bit_generator) is self._compiled_bit_generator
        self._state_addresses[i] = generator.bit_generator.ctypes.state_address if compiled else 0

    def _start(self, games: np.ndarray):
        self._game.start_drawn(games)
        self._illegal_counts[games] = 0

    def _finish(self, games: np.ndarray, illegal: np.ndarray, reasons: dict[int, str]) -> dict[str, Any]:
        """Record the last observation and info of the ended ``games``, then start their next game."""
        ended = np.zeros(self.num_envs, dtype=bool)
        ended[games] = True
        game_list = games.tolist()  # Python ints index lists and object arrays faster than numpy ints
        final_obs = np.full(self.num_envs, None, dtype=object)
        last = self._encode(games)
        for i, obs in zip(game_list, iterate(self.observation_space, last)):
            final_obs[i] = obs
        final_info = self._infos(ended, illegal & ended)
        final_reasons = {i: reason for i, reason in reasons.items() if ended[i]}
        if final_reasons:
            final_info["illegal_reason"], final_info["_illegal_reason"] = self._object_info(final_reasons)

        # Each game's dice come from its own generator, exactly as YachtEnv.reset() would draw them:
        # in one compiled call where that is checked to be exact, else one draw_game_dice per game.
        # (The compiled draw bypasses the generators' thread locks; the env is not thread-safe anyway.)
        compiled = self._state_addresses[games] != 0
        if compiled.any():
            _draw_games(self._next_uint32, self._state_addresses, games[compiled], self._faces, self.rules.num_faces)
        if not compiled.all():
            for i in games[~compiled].tolist():
                self._faces[i, 0] = draw_game_dice(self._generator(i), self.rules)
        self._start(games)
        return {"final_obs": final_obs, "_final_obs": ended, "final_info": final_info, "_final_info": ended.copy()}

    def _infos(self, present: np.ndarray, illegal: np.ndarray | None = None) -> dict[str, Any]:
        """The batched info keys of ``YachtEnv`` for the sub-envs in ``present`` (zeros elsewhere).

        ``illegal`` is the ``illegal_action`` flag of every sub-env (all False when None).
        """
        if present.all():
            masks, totals, turns = self._masks(), self._totals.copy(), self._turn_numbers()
        else:
            games = np.flatnonzero(present)
            masks = np.zeros((self.num_envs, self.layout.num_actions), dtype=np.int8)
            masks[games] = self._masks(games)
            totals = np.zeros(self.num_envs, dtype=np.int64)
            totals[games] = self._totals[games]
            turns = np.zeros(self.num_envs, dtype=np.int64)
            turns[games] = np.minimum(self._turns[games] + 1, self.rules.num_turns)
        return {
            "action_mask": masks,
            "_action_mask": present.copy(),
            "total": totals,
            "_total": present.copy(),
            "turn": turns,
            "_turn": present.copy(),
            "illegal_action": np.zeros(self.num_envs, dtype=bool) if illegal is None else illegal,
            "_illegal_action": present.copy(),
        }

    def _object_info(self, values: dict[int, Any]) -> tuple[np.ndarray, np.ndarray]:
        array = np.full(self.num_envs, None, dtype=object)
        present = np.zeros(self.num_envs, dtype=bool)
        for i, value in values.items():
            array[i] = value
            present[i] = True
        return array, present

    def _masks(self, games: np.ndarray | None = None) -> np.ndarray:
        game = self._game
        games = game.all_tables if games is None else games
        masks = np.empty((len(games), self.layout.num_actions), dtype=np.int8)
        # numba's Dispatcher.__call__ hints take fewer arguments than the compiled function does
        gather_masks(games, game.hands, game.rolls_left, game.open_bits, game.seat, *self._mask_args, masks)  # type: ignore[call-arg]
        return masks

    def _turn_numbers(self) -> np.ndarray:
        return np.minimum(self._turns + 1, self.rules.num_turns)

    def _observations(self):
        if self.encoding.sheet_width:
            return self._encode(self._game.all_tables)
        return self.encoding.encode_batch(self._hands, self._rolls_left, self._open)

    def _encode(self, games: np.ndarray):
        sheet = self._game.sheet_state(games, np.zeros(len(games), dtype=np.int64)) if self.encoding.sheet_width else ()
        return self.encoding.encode_batch(self._hands[games], self._rolls_left[games], self._open[games], *sheet)

    def _why_illegal(self, game: int, action) -> str:
        return self.layout.why_illegal(int(action), int(self._rolls_left[game]), int(self._open[game]), int(self._hands[game]))
