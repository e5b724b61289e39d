"""Time the two-player solver's turn on full Yacht, layer by layer, and project the full solve's time and memory.

For each layer a sample of pairs is solved against a stand-in layer below (random stored values: the work
does not depend on them), on every core numba is given. Prints the values per second of each layer, the
projected time of the full solve (the sum over layers of its values at its rate), the peak memory (the
two largest neighbouring layers plus the layout) and the machine's load while it ran.

    python benchmarks/bench_two_player.py [--rules yacht] [--pairs 400] [--layers 8,12,16]
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agents.two_player import check_rules, maximizing_policy
from agents.two_player.kernel import kernel_arrays, solve_pairs
from agents.two_player.layout import PairLayout
from agents.two_player.solve import layer_arrays, worker_count
from yacht_env.option_values import whole_number, whole_numbers


def solve_on_threads(arrays, below, policy, view, first: int, last: int) -> None:
    """Pairs ``first .. last - 1`` split over the solve's threads, one pair at a time each."""
    with ThreadPoolExecutor(max_workers=worker_count()) as pool:
        list(pool.map(lambda pair: solve_pairs(arrays, below, policy, view, pair, pair + 1), range(first, last)))


def time_layer(arrays, layout: PairLayout, num_open: int, num_pairs: int, rng: np.random.Generator) -> tuple[int, float, float]:
    """``(values solved, wall seconds, CPU seconds)`` for about ``num_pairs`` pairs of layer ``num_open`` (runs of 64)."""
    layer, under = layout.layers[num_open], layout.layers[num_open - 1]
    below = layer_arrays(under, rng.integers(0, 65535, under.num_values, dtype=np.uint16))
    view = layer_arrays(layer, np.empty(layer.num_values, np.uint16))
    run = min(64, layer.num_pairs)
    starts = rng.choice(layer.num_pairs - run + 1, size=max(1, min(num_pairs // run, layer.num_pairs // run)), replace=False)
    policy = maximizing_policy()
    values, seconds, cpu = 0, 0.0, 0.0
    for first in np.sort(starts):
        last = int(first) + run
        started, cpu_started = time.perf_counter(), time.process_time()
        solve_on_threads(arrays, below, policy, view, int(first), last)
        seconds += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        values += int(layer.offset[last] - layer.offset[first])
    return values, seconds, cpu


def main() -> None:
    """Print the per-layer rates and the projection."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="yacht")
    parser.add_argument("--pairs", type=whole_number(), default=400, help="pairs timed per layer")
    parser.add_argument(
        "--layers", type=whole_numbers(noun="layers", least=1), help="comma-separated layers to time (default: every layer)"
    )
    args = parser.parse_args()
    rules = check_rules(args.rules)
    layout = PairLayout(rules)
    wanted = args.layers or list(range(1, layout.num_layers))
    if max(wanted) >= layout.num_layers:
        parser.error(f"argument --layers: layers of {args.rules} run from 1 to {layout.num_layers - 1}, got {max(wanted)}")
    arrays = kernel_arrays(rules, layout)
    rng = np.random.default_rng(0)
    time_layer(arrays, layout, 2, 4, rng)  # compile (or load the compiled kernel) before timing
    print(f"load before: {os.getloadavg()}")
    rates, cpu_rates = {}, {}
    for n in wanted:
        values, seconds, cpu = time_layer(arrays, layout, n, args.pairs, rng)
        rates[n], cpu_rates[n] = values / seconds, values / cpu
        layer = layout.layers[n]
        print(
            f"layer {n:2d}: {layer.num_pairs:8,d} pairs {layer.num_values:12,d} values  {rates[n]:10,.0f} values/s "
            f"({cpu_rates[n]:9,.0f} per CPU second)  -> {layer.num_values / rates[n]:8.1f} s"
        )
    print(f"load after: {os.getloadavg()}")
    # Layers not timed take the rate of the nearest timed one.
    timed = np.array(sorted(rates))
    total, cpu_total = 0.0, 0.0
    for n in range(1, layout.num_layers):
        nearest = int(timed[np.argmin(np.abs(timed - n))])
        total += layout.layers[n].num_values / rates[nearest]
        cpu_total += layout.layers[n].num_values / cpu_rates[nearest]
    sizes = [layer.num_values for layer in layout.layers]
    peak_values = max(a + b for a, b in zip(sizes[:-1], sizes[1:]))
    layout_bytes = sum(layer.lo.nbytes + layer.width.nbytes + layer.offset.nbytes for layer in layout.layers)
    print(f"values in all: {layout.total_values:,} ({layout.total_values * 2 / 2**30:.2f} GiB as uint16 on disk)")
    print(f"projected full solve: {total / 3600:.2f} h on {os.cpu_count()} cores at this load")
    cores = os.cpu_count() or 1
    print(f"  CPU time: {cpu_total / 3600:.2f} h, so {cpu_total / cores / 3600:.2f} h with {cores} cores to itself")
    print(f"projected peak memory: {(peak_values * 2 + layout_bytes) / 2**30:.2f} GiB (two neighbouring layers and the layout)")


if __name__ == "__main__":
    main()
