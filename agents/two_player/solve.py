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
from agents.two_player.kernel import SCALE, FixedMover, LayerArrays, kernel_arrays, solve_pairs, solve_pairs_following
from agents.two_player.layout import Layer, PairLayout
from yacht_env.atomic_files import remove_partial_files, write_atomically
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


def load_layer(folder: Path | None, layer: Layer) -> np.ndarray | None:
    """Layer ``layer``'s stored values, memory-mapped read-only, or ``None`` when absent or not that layer's array."""
    if folder is None:
        return None
    path = layer_path(folder, layer.num_open)
    if not path.is_file():
        return None
    try:
        values = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    if values.dtype != np.uint16 or values.shape != (layer.num_values,):
        return None
    return values


def first_missing_layer(folder: Path | None, layout: PairLayout) -> int:
    """The first layer not stored in ``folder`` (``layout.num_layers`` when all are): where a solve starts."""
    for layer in layout.layers[1:]:
        if load_layer(folder, layer) is None:
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
    """Every layer's values as stored in ``folder`` (memory maps), or ``None`` when one is missing: nothing is solved."""
    if first_missing_layer(folder, layout) < layout.num_layers:
        return None
    stored = [load_layer(folder, layer) for layer in layout.layers[1:]]
    return [terminal_layer()] + [values for values in stored if values is not None]


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
    stored += [load_layer(folder, layer) for layer in layout.layers[1:]]
    # Resume after the last layer of an unbroken run from the end of the game.
    first_missing = next((n for n, values in enumerate(stored) if values is None), len(stored))
    below = stored[first_missing - 1]
    assert below is not None
    for num_open in range(first_missing, layout.num_layers):
        policy = policies[num_open % 2]  # an odd count of open rows in all: player two's turn
        guide_below = None if guide is None else guide[num_open - 1]
        values = solve_layer(arrays, layout, num_open, below, policy, report, guide_below)
        if folder is not None:
            write_atomically(layer_path(folder, num_open), lambda handle: np.save(handle, values, allow_pickle=False))
            stored[num_open] = load_layer(folder, layout.layers[num_open])
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
