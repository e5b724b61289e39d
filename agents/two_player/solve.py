"""The layered solve of the two-player game: from the end of the game back to its first turn, resumable.

Layer ``n`` (``n`` rows open in all) reads only layer ``n - 1``, so only those two are in memory. Each
finished layer is written atomically to the cache folder (:mod:`agents.solvers.solution_cache`) as a ``.npy``
of ``uint16`` fixed-point values (see :data:`agents.two_player.kernel.SCALE`); a solve that finds layers
on disk continues from the last one written. As every layer is computed from the stored (rounded) layer
under it, a resumed solve writes the same bytes as one that ran through.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import numba
import numpy as np

from agents.solvers import solution_cache
from agents.solvers.array_files import ArrayFileError, read_array, write_array
from agents.solvers.solution_cache import CacheFolderError
from agents.two_player.kernel import SCALE, FixedMover, LayerArrays, kernel_arrays, solve_pairs, solve_pairs_following
from agents.two_player.layout import Layer, PairLayout
from yacht_env.atomic_files import remove_partial_files
from yacht_env.rules import RuleSet

FORMAT = 1  # bump when the meaning of a stored layer changes
VALUES_PER_BATCH = 1 << 18  # values per batch of pairs: small enough to share the work, large to amortize a call

Report = Callable[[int, int, float], None]  # (layer, values done in it, seconds so far)


def solution_folder(rules: RuleSet, label: str) -> Path | None:
    """The cache folder of one solution (``label``: ``game`` or a best response's), ``None`` with the cache off."""
    folder = solution_cache.cache_dir()
    return None if folder is None else folder / f"two-player-v{FORMAT}-{rules.fingerprint}-{label}"


def layer_path(folder: Path, num_open: int) -> Path:
    """The file of layer ``num_open``."""
    return folder / f"layer-{num_open:02d}.npy"


def layer_check(layout: PairLayout, layer: Layer):
    """The range check of layer ``layer``'s stored values (:func:`agents.solvers.array_files.read_array`).

    Every value is a chance, at most ``SCALE``; and at the ends of a pair's stored range the sign of the
    game is settled whatever is played: at ``d = -M(A)`` (the mover behind by all it can still score) the
    mover ends level at best, at most 1/2; at ``d = M(B)`` it ends level at worst, at least 1/2. A layer of
    zeros, or of ones, breaks the one or the other.
    """
    half = round(0.5 * SCALE)
    movers = np.repeat(layer.mover_sets, len(layer.other_sets))
    others = np.tile(layer.other_sets, len(layer.mover_sets))
    stored = layer.width > 0
    low_ends = layer.offset[:-1][stored & (layer.lo == -layout.most_to_come[movers])]
    high_ends = layer.offset[1:][stored & (layer.lo + layer.width - 1 == layout.most_to_come[others])] - 1

    def check(values: np.ndarray) -> str | None:
        largest = max((int(values[i : i + (1 << 24)].max()) for i in range(0, len(values), 1 << 24)), default=0)
        if largest > SCALE:
            return f"holds {largest}, above {int(SCALE)} (a chance of 1): not a solved layer"
        if (np.asarray(values[low_ends]) > half).any() or (np.asarray(values[high_ends]) < half).any():
            return "holds chances on the wrong side of 1/2 where the game is settled: not a solved layer"
        return None

    return check


def load_layer(folder: Path | None, layout: PairLayout, layer: Layer) -> np.ndarray | None:
    """Layer ``layer``'s stored values, memory-mapped read-only, or ``None`` when the file is absent.

    ``ArrayFileError`` (one line) for a file that is there but is not the layer: its size, header, checksum
    and range are checked (:mod:`agents.solvers.array_files`).
    """
    if folder is None:
        return None
    return read_array(layer_path(folder, layer.num_open), np.uint16, (layer.num_values,), layer_check(layout, layer), mmap=True)


def usable_layer(folder: Path | None, layout: PairLayout, layer: Layer) -> np.ndarray | None:
    """:func:`load_layer`, with a damaged file counted as absent (said on stderr): what a solve does, writing it again."""
    try:
        return load_layer(folder, layout, layer)
    except ArrayFileError as error:
        print(f"{error}: solved again", file=sys.stderr, flush=True)
        return None


def write_layer(folder: Path, num_open: int, values: np.ndarray) -> None:
    """Write layer ``num_open`` and its checksum; ``CacheFolderError`` (one line) when the folder cannot take it."""
    try:
        write_array(layer_path(folder, num_open), values)
    except OSError as error:
        raise CacheFolderError(
            f"cannot write the two-player solution in {folder}: {error.strerror or error} "
            f"(set {solution_cache.CACHE_ENV} to a writable folder with room for it)"
        ) from None


def first_missing_layer(folder: Path | None, layout: PairLayout) -> int:
    """The first layer not stored in ``folder`` (``layout.num_layers`` when all are): where a solve starts.

    A damaged layer counts as missing.
    """
    for layer in layout.layers[1:]:
        try:
            if load_layer(folder, layout, layer) is None:
                return layer.num_open
        except ArrayFileError:
            return layer.num_open
    return layout.num_layers


def terminal_layer() -> np.ndarray:
    """Layer 0, the game over with equal scores (``d = 0``): a tie, 1/2."""
    return np.array([round(0.5 * SCALE)], dtype=np.uint16)


def layer_arrays(layer: Layer, values: np.ndarray) -> LayerArrays:
    """The kernel's view of one layer and its values."""
    return LayerArrays(layer.mover_sets, layer.other_sets, layer.lo, layer.width, layer.offset, values)


def solve_layer(
    arrays,
    layout: PairLayout,
    num_open: int,
    below: np.ndarray,
    policy: FixedMover,
    report: Report | None,
    guide_below: np.ndarray | None = None,
) -> np.ndarray:
    """The values of layer ``num_open`` from the stored values ``below`` of the layer under it, on every core.

    With ``guide_below`` (the solved game's layer under it), a maximizing mover decides by those values
    instead of by its own: a strategy's values against a fixed opponent (:func:`solve_all_layers`).
    """
    layer = layout.layers[num_open]
    values = np.empty(layer.num_values, dtype=np.uint16)
    view, below_view = layer_arrays(layer, values), layer_arrays(layout.layers[num_open - 1], np.asarray(below))
    if guide_below is not None and not policy.fixed:
        guide_view = layer_arrays(layout.layers[num_open - 1], np.asarray(guide_below))
        solve = lambda first, last: solve_pairs_following(arrays, guide_view, below_view, view, first, last)
    else:
        solve = lambda first, last: solve_pairs(arrays, below_view, policy, view, first, last)
    # Batches of about VALUES_PER_BATCH values, whole pairs each, handed to the threads as they finish.
    bounds = np.searchsorted(layer.offset, np.arange(0, layer.num_values, VALUES_PER_BATCH), side="right") - 1
    bounds = np.unique(np.append(bounds, layer.num_pairs))
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=worker_count()) as pool:
        batches = [pool.submit(solve, int(first), int(last)) for first, last in zip(bounds[:-1], bounds[1:])]
        done = 0
        for batch, last in zip(batches, bounds[1:]):
            batch.result()
            done = max(done, int(layer.offset[last]))
            if report is not None:
                report(num_open, done, time.perf_counter() - started)
    return values


def worker_count() -> int:
    """Threads of the solve: numba's thread count (``NUMBA_NUM_THREADS``, the cores by default)."""
    return max(1, int(getattr(numba.config, "NUMBA_NUM_THREADS", os.cpu_count() or 1)))


def stored_layers(folder: Path | None, layout: PairLayout) -> list[np.ndarray] | None:
    """Every layer's values as stored in ``folder`` (memory maps), or ``None`` when one is missing: nothing is solved.

    ``ArrayFileError`` (one line) for a layer file that is damaged.
    """
    stored = [terminal_layer()]
    for layer in layout.layers[1:]:
        values = load_layer(folder, layout, layer)
        if values is None:
            return None
        stored.append(values)
    return stored


def solve_all_layers(
    rules: RuleSet,
    layout: PairLayout,
    policies: tuple[FixedMover, FixedMover],
    folder: Path | None,
    report: Report | None = None,
    guide: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Every layer's values, solved where not found in ``folder`` and written there as each is done.

    ``policies[k]`` is the decision rule of the mover of the layers where player ``k + 1`` moves (even
    layers: player one). With ``guide`` (the solved game's layers), a maximizing mover plays the game's
    decisions rather than its own best: the values are then those of that strategy against the fixed
    policy. Returns memory maps of the stored files (or, with no folder, the arrays).
    """
    arrays = kernel_arrays(rules, layout)
    if folder is not None and folder.is_dir():
        remove_partial_files(folder)  # what a killed write left behind
    stored: list[np.ndarray | None] = [terminal_layer()]
    stored += [usable_layer(folder, layout, layer) for layer in layout.layers[1:]]
    # Resume after the last layer of an unbroken run from the end of the game.
    first_missing = next((n for n, values in enumerate(stored) if values is None), len(stored))
    if folder is not None and first_missing < layout.num_layers:
        # refused before hours of solving rather than at the first layer that does not fit
        needed = sum(2 * layer.num_values + 4_096 for layer in layout.layers[first_missing:])
        solution_cache.check_folder(folder, needed, "the two-player solution")
    below = stored[first_missing - 1]
    assert below is not None
    for num_open in range(first_missing, layout.num_layers):
        policy = policies[num_open % 2]  # an odd count of open rows in all: player two's turn
        guide_below = None if guide is None else guide[num_open - 1]
        values = solve_layer(arrays, layout, num_open, below, policy, report, guide_below)
        if folder is not None:
            write_layer(folder, num_open, values)
            stored[num_open] = load_layer(folder, layout, layout.layers[num_open])
        else:
            stored[num_open] = values
        below = values  # only this layer and the next are in memory at once
    return [layer_values for layer_values in stored if layer_values is not None]  # every layer, by now


# The solve time an estimate of the time left needs under it: the rate of a smaller sample swings by
# far more than the layers' real rates (a few thousand values take a few hundredths of a second).
MIN_TIMED_SECONDS = 2.0


def estimate_seconds_left(values_left: int, timed_values: int, timed_seconds: float) -> float | None:
    """The seconds to solve ``values_left`` more values at the rate of ``timed_values`` solved in
    ``timed_seconds``; ``None`` while that rate rests on under ``MIN_TIMED_SECONDS`` of solving.
    """
    if timed_seconds < MIN_TIMED_SECONDS or timed_values <= 0:
        return None
    return max(values_left, 0) * timed_seconds / timed_values


class LayerReport:
    """A line per finished layer on a stream (a log file), with the values per second and the time left.

    The time left is the values left at the rate of the layers solved so far, the run's first layer aside:
    its time holds the kernels' compilation (layer 1 of a fresh solve, 315 values of Yacht, takes a second
    where the next 7,416 take a hundredth), which once made the estimate after layer 1 some 76,000 minutes.
    """

    def __init__(self, layout: PairLayout, start_layer: int, stream=sys.stderr):
        self.layout = layout
        self.remaining = sum(layer.num_values for layer in layout.layers[start_layer:])
        self.done = 0  # values of the layers finished
        self.layers_done = 0
        self.timed_values = 0  # of the layers finished after the first: what the rate is measured on
        self.timed_seconds = 0.0
        self.in_layer = (0, 0.0)  # the layer being solved: its values done and seconds so far
        self.stream = stream

    def seconds_left(self) -> float | None:
        """The estimated seconds left (the layer under way counted, unless it is the first), or ``None`` (too early)."""
        done_in_layer, seconds = self.in_layer if self.layers_done > 0 else (0, 0.0)
        values_left = self.remaining - self.done - self.in_layer[0]
        return estimate_seconds_left(values_left, self.timed_values + done_in_layer, self.timed_seconds + seconds)

    def __call__(self, num_open: int, done_in_layer: int, seconds: float) -> None:
        """Called after each batch; prints once the layer is complete."""
        layer = self.layout.layers[num_open]
        if done_in_layer < layer.num_values:
            self.in_layer = (done_in_layer, seconds)
            return
        self.in_layer = (0, 0.0)
        self.done += layer.num_values
        if self.layers_done > 0:
            self.timed_values += layer.num_values
            self.timed_seconds += seconds
        self.layers_done += 1
        left = self.seconds_left()
        estimate = "" if left is None else f"; estimated time left {left / 60:.1f} min"
        print(
            f"layer {num_open:2d}/{self.layout.num_layers - 1}: {layer.num_values:,} values in {seconds:.1f} s "
            f"({layer.num_values / max(seconds, 1e-9):,.0f}/s){estimate}",
            file=self.stream,
            flush=True,
        )
