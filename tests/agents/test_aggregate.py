"""The benchmark's aggregates drawn and printed (agents.benchmark.aggregate): each scope's three plots, from the rows
and the probabilities of improvement, and the command line's bounds and defaults."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from agents.benchmark.results import read_results, write_results
from tests.agents.test_benchmark import evaluated, with_regret  # noqa: F401  (a fixture)

pytest.importorskip("rliable")
pytest.importorskip("matplotlib")

SCOPE = "yacht-solo-20k"
REGRETS = {
    "good": [1.0, 2.0, 3.0, 4.0, 30.0],
    "bad": [10.0, 11.0, 12.0, 13.0, 14.0],
    "fair": [5.0, 6.0, 7.0, 8.0, 9.0],
    "awful": [150.0, 160.0, 166.0, 167.0, 168.0],  # a run near 1% of the optimum: the profiles start at 0, not below
}


@pytest.fixture(scope="module")
def drawn(evaluated, tmp_path_factory):  # noqa: F811
    """Three methods' results aggregated with their plots; every figure kept as it was before its PNG was written."""
    import agents.benchmark.aggregate as aggregate_module

    folder = tmp_path_factory.mktemp("aggregate")
    base = read_results(evaluated / SCOPE / "greedy" / "seed0.json")
    for method, values in REGRETS.items():
        for seed, regret in enumerate(values):
            write_results(folder / "in" / method / f"{seed}.json", with_regret(base, method, seed, regret))
    figures, save_png = {}, aggregate_module.save_png

    def kept(path, figure):
        figures[path.name] = figure
        save_png(path, figure)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggregate_module, "save_png", kept)
        rows, improvement = aggregate_module.aggregate([str(folder / "in")], folder / "out", reps=200)
    return folder / "out", figures, rows, improvement[SCOPE], base.evaluation.optimum


def test_each_scope_gets_its_three_plots_as_pngs_at_120_dpi(drawn):
    from PIL import Image

    out, figures, *_ = drawn
    names = [f"{SCOPE}-intervals.png", f"{SCOPE}-profile.png", f"{SCOPE}-improvement.png"]
    assert sorted(figures) == sorted(names)
    for name in names:
        with Image.open(out / name) as image:
            assert image.format == "PNG" and [round(dots) for dots in image.info["dpi"]] == [120, 120]


def test_each_method_keeps_its_colour_of_tab10_in_name_order_in_every_plot(drawn):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    _, figures, *_ = drawn
    tab10 = [to_rgba(plt.get_cmap("tab10")(i)) for i in range(len(REGRETS))]
    legend = figures[f"{SCOPE}-profile.png"].axes[0].get_legend()
    assert [(text.get_text(), to_rgba(line.get_color())) for text, line in zip(legend.get_texts(), legend.get_lines())] == [
        (method, tab10[i]) for i, method in enumerate(sorted(REGRETS))
    ]


def test_the_interval_plot_names_its_axis_below_its_panels(drawn):
    _, figures, *_ = drawn
    figure = figures[f"{SCOPE}-intervals.png"]
    (label,) = [text for text in figure.texts if text.get_text() == "normalized score (share of the optimum)"]
    bottom = min(axes.get_position().y0 for axes in figure.axes)
    assert -1.0 < label.get_position()[1] < bottom  # below the panels, within a panel's height of them


def test_the_performance_profiles_run_from_just_below_the_lowest_score_to_the_optimum(drawn):
    _, figures, _, _, optimum = drawn
    lowest = min(1 - regret / optimum for values in REGRETS.values() for regret in values)
    axis = figures[f"{SCOPE}-profile.png"].axes[0]
    xs = np.concatenate([line.get_xdata() for line in axis.get_lines() if len(line.get_xdata()) > 2])
    assert np.isclose(xs.min(), max(0.0, lowest - 0.02)) and np.isclose(xs.max(), 1.0)
    assert lowest < 0.02 and min(1 - regret / optimum for regret in REGRETS["bad"]) - 0.02 > 0


def test_the_improvement_plot_marks_each_estimate_within_its_interval_a_row_per_pair(drawn):
    _, figures, _, improvement, _ = drawn
    figure = figures[f"{SCOPE}-improvement.png"]
    assert tuple(figure.get_size_inches()) == pytest.approx((5, 0.5 + 0.45 * len(improvement)))
    axis = figure.axes[0]
    marks = [segment[0][0] for collection in axis.collections for segment in collection.get_segments()]
    bars = [(bar.get_x(), bar.get_x() + bar.get_width()) for bar in axis.patches]
    assert marks == pytest.approx([value[0] for value in improvement.values()])
    assert np.allclose(bars, [(value[1], value[2]) for value in improvement.values()]), (bars, improvement)


def test_the_tables_list_every_probability_of_improvement_and_the_json_reads_back(drawn):
    out, _, rows, improvement, _ = drawn
    table = (out / "aggregates.md").read_text()
    for pair, value in improvement.items():
        assert f"| {SCOPE} | {pair.replace(',', ' > ')} | {value[0]:.4f} [{value[1]:.4f}, {value[2]:.4f}] |" in table
    text = (out / "aggregates.json").read_text()
    document = json.loads(text)
    assert text.startswith('{\n  "runs": 20,') and document["improvement"][SCOPE] == {k: list(v) for k, v in improvement.items()}
    assert [row["method"] for row in document["rows"]] == [row.method for row in rows]


def test_the_command_says_where_it_wrote_with_or_without_plots(evaluated, tmp_path, capsys):  # noqa: F811
    from agents.benchmark.aggregate import main

    main([str(evaluated), "--out", str(tmp_path / "a"), "--reps", "100"])
    assert capsys.readouterr().out.endswith(
        f"written to {tmp_path / 'a'}/: aggregates.md, aggregates.csv, aggregates.json and the plots\n"
    )
    main([str(evaluated), "--out", str(tmp_path / "b"), "--reps", "100", "--no-plots"])
    assert capsys.readouterr().out.endswith("aggregates.json\n") and not list((tmp_path / "b").glob("*.png"))


@pytest.mark.parametrize("reps, refused", [(99, True), (100, False), (1_000_000, False), (1_000_001, True)])
def test_the_replications_are_from_100_to_a_million(tmp_path, reps, refused):
    from agents.benchmark.aggregate import main

    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "absent.json"), "--reps", str(reps), "--out", str(tmp_path / "out")])
    said = str(exit_info.value.code)
    assert said.startswith("error: --reps is from 100 to 1,000,000") == refused, said


def test_the_options_default_to_what_their_help_says():
    from agents.benchmark.aggregate import parser

    actions = parser()._actions
    said = {action.dest: re.search(r"default ([^)]+)\)", action.help or "") for action in actions}
    defaults = {action.dest: action.default for action in actions}
    assert {dest: found[1].replace(",", "") for dest, found in said.items() if found} == {
        dest: str(defaults[dest]) for dest, found in said.items() if found
    }
    assert {dest for dest, found in said.items() if found} == {"out", "reps", "bootstrap_seed"}
    import inspect

    from agents.benchmark.aggregate import aggregate

    function = inspect.signature(aggregate).parameters  # called from Python, as the command calls it
    assert (function["reps"].default, function["seed"].default) == (defaults["reps"], defaults["bootstrap_seed"])


@pytest.mark.parametrize("seed, refused", [(2**32 - 1, False), (2**32, True)])
def test_the_bootstrap_seed_is_any_32_bit_number(evaluated, tmp_path, seed, refused, capsys):  # noqa: F811
    from agents.benchmark.aggregate import main

    command = [str(evaluated), "--out", str(tmp_path), "--reps", "100", "--no-plots", "--bootstrap-seed", str(seed)]
    if refused:
        with pytest.raises(SystemExit) as exit_info:
            main(command)
        assert exit_info.value.code == 2 and "--bootstrap-seed" in capsys.readouterr().err
    else:
        main(command)
        assert json.loads((tmp_path / "aggregates.json").read_text())["bootstrap_seed"] == seed


def test_plots_need_matplotlib_and_the_tables_alone_do_not(evaluated, tmp_path, monkeypatch):  # noqa: F811
    from agents.benchmark.aggregate import main

    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(SystemExit) as exit_info:
        main([str(evaluated), "--out", str(tmp_path / "plots"), "--reps", "100"])
    assert str(exit_info.value.code).startswith("error: matplotlib is not installed; it comes with the benchmark extra")
    main([str(evaluated), "--out", str(tmp_path / "tables"), "--reps", "100", "--no-plots"])
    assert (tmp_path / "tables" / "aggregates.md").exists()
