"""agents.training.curves: learning curves of runs as a picture, and a clear refusal without one."""

from __future__ import annotations

import pytest

from agents.training.curves import main

pytest.importorskip("matplotlib")


def write_curve(run_dir, rows):
    run_dir.mkdir()
    lines = ["steps,wall_seconds,mean_score,percent_of_optimal,regret_per_decision"]
    lines += [",".join(str(v) for v in row) for row in rows]
    (run_dir / "learning_curve.csv").write_text("\n".join(lines) + "\n")


def test_two_runs_make_one_png(tmp_path, capsys):
    write_curve(tmp_path / "yacht", [(500000, 100.0, 163.0, 96.0, 0.16), (1000000, 200.0, 165.0, 97.2, 0.12)])
    write_curve(tmp_path / "yahtzee", [(500000, 110.0, 229.0, 89.8, 0.67)])
    out = tmp_path / "pictures" / "curves.png"
    assert main([str(tmp_path / "yacht"), str(tmp_path / "yahtzee"), "--out", str(out), "--level", "97"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and capsys.readouterr().out.strip() == str(out)
    assert [p.name for p in out.parent.iterdir()] == ["curves.png"]  # no partial file left behind


def test_a_folder_without_a_solitaire_curve_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "empty"), "--out", str(tmp_path / "c.png")])
    assert exit_info.value.code == 2
    assert (
        capsys.readouterr().err.strip() == f"error: {tmp_path / 'empty'} has no solitaire learning curve "
        "(learning_curve.csv with percent_of_optimal)"
    )
    assert not (tmp_path / "c.png").exists()


def test_a_corrupt_curve_is_refused_in_one_line_naming_the_file(tmp_path, capsys):
    run = tmp_path / "bad"
    write_curve(run, [(500000, "x", 163.0, 96.0, 0.16)])
    with pytest.raises(SystemExit) as exit_info:
        main([str(run), "--out", str(tmp_path / "c.png")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1
    assert str(run / "learning_curve.csv") in err and "Traceback" not in err and not (tmp_path / "c.png").exists()
    (run / "learning_curve.csv").write_text("steps,percent_of_optimal\n1,2\n")  # columns missing
    with pytest.raises(SystemExit):
        main([str(run), "--out", str(tmp_path / "c.png")])
    assert "has no solitaire learning curve" in capsys.readouterr().err


def family_folder(tmp_path, **curves: str):
    """A folder of ``<family>_<rules>.csv`` curves, each its rows of steps, wall seconds and % of the optimum."""
    folder = tmp_path / "curves"
    folder.mkdir()
    for name, rows in curves.items():
        (folder / f"{name}.csv").write_text(f"steps,wall_seconds,percent_of_optimal\n{rows}\n")
    return folder


def test_curves_of_two_families_make_one_panel_per_rule_set(tmp_path, capsys):
    import matplotlib.pyplot as plt

    folder = family_folder(
        tmp_path, ppo_yacht="500000,110,95.8\n2000000,429,96.9", plan_yacht="50000,60,99.9", plan_yatzy="50000,65,98.3"
    )
    out = tmp_path / "families.png"
    assert main(["--families", str(folder), "--out", str(out)]) == 0
    assert plt.imread(out).shape[1] > plt.imread(out).shape[0] * 1.8  # two panels side by side
    (folder / "ppo_yahtzee.csv").write_text("steps,mean_score\n1,2\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--families", str(folder), "--out", str(out)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "ppo_yahtzee.csv has no wall_seconds" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        main([str(folder), "--families", str(folder), "--out", str(out)])


def test_rewinding_keeps_the_rows_up_to_the_checkpoint_and_gives_their_wall_time(tmp_path):
    from agents.training.curves import rewind_learning_curve

    assert rewind_learning_curve(tmp_path / "fresh", 1000) == 0.0  # no curve yet: nothing spent
    rows = [(1000, 40.5, 160.0, 95.0, 0.2), (2000, 81.0, 162.0, 96.0, 0.15), (3000, 120.25, 163.0, 97.0, 0.1)]
    write_curve(tmp_path / "run", rows)
    curve = tmp_path / "run" / "learning_curve.csv"
    header = curve.read_text().splitlines()[0]
    assert rewind_learning_curve(tmp_path / "run", 2000) == 81.0
    assert curve.read_text() == "\n".join([header, "1000,40.5,160.0,95.0,0.2", "2000,81.0,162.0,96.0,0.15"]) + "\n"
    assert rewind_learning_curve(tmp_path / "run", 2999) == 81.0  # between checkpoints: the last row before
    assert rewind_learning_curve(tmp_path / "run", 999) == 0.0  # before the first evaluation: the header alone
    assert curve.read_text() == header + "\n"


class Drawn:
    """The figures a command draws, kept as they are before their PNG is written."""

    def __init__(self, monkeypatch):
        import agents.training.curves as curves

        self.figures, save_png = [], curves.save_png
        monkeypatch.setattr(
            curves, "save_png", lambda out, figure, dpi: (self.figures.append(figure), save_png(out, figure, dpi))[1]
        )


def levels_are_thin_and_curves_stand_out(axes):
    """The dashed levels are drawn, and thinner than the curves."""
    levels = [line.get_linewidth() for line in axes.get_lines() if line.get_linestyle() == "--"]
    curves = [line.get_linewidth() for line in axes.get_lines() if line.get_linestyle() != "--"]
    return levels and all(0 < level < min(curves) for level in levels)


def lines_of(axes):
    """``(x, y)`` of each line drawn on ``axes`` but the dashed levels, and the levels' heights."""
    drawn = [line for line in axes.get_lines() if line.get_linestyle() != "--"]
    levels = [line.get_ydata()[0] for line in axes.get_lines() if line.get_linestyle() == "--"]
    return [(list(line.get_xdata()), list(line.get_ydata())) for line in drawn], levels


def test_curves_are_drawn_against_minutes_with_the_levels_dashed(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    drawn = Drawn(monkeypatch)
    write_curve(tmp_path / "yacht", [(500000, 90.0, 163.0, 96.0, 0.16), (1000000, 300.0, 165.0, 97.2, 0.12)])
    write_curve(tmp_path / "yatzy", [(500000, 120.0, 229.0, 89.8, 0.67)])
    out = tmp_path / "curves.png"
    assert main([str(tmp_path / "yacht"), str(tmp_path / "yatzy"), "--out", str(out)]) == 0
    ((percent, regret),) = [figure.axes for figure in drawn.figures]
    assert lines_of(percent) == ([([1.5, 5.0], [96.0, 97.2]), ([2.0], [89.8])], [98.0, 99.0])  # the default levels
    assert lines_of(regret) == ([([1.5, 5.0], [0.16, 0.12]), ([2.0], [0.67])], [])
    assert regret.get_yscale() == "log" and percent.get_yscale() == "linear"
    assert levels_are_thin_and_curves_stand_out(percent)
    assert [text.get_text() for text in percent.get_legend().get_texts()] == ["yacht", "yatzy"]
    assert plt.imread(out).shape[:2] == (462, 1210)  # 11 x 4.2 inches at 110 dpi
    main([str(tmp_path / "yacht"), "--out", str(out), "--level", "95", "--level", "97.5"])
    assert lines_of(drawn.figures[-1].axes[0])[1] == [95.0, 97.5]
    regret = drawn.figures[-1].axes[1]  # 0.12 to 0.16: within a decade, its labels all minor ones
    regret.figure.canvas.draw()
    labels = [label.get_text() for minor in (False, True) for label in regret.get_yticklabels(minor=minor)]
    labels = [text for text in labels if text]
    assert len(labels) == len(set(labels)) > 3  # each a different number
    assert all(float(text) == float(f"{float(text):.3g}") and "e" not in text for text in labels)  # in plain decimals


def test_families_get_a_panel_per_rule_set_with_their_curves_against_minutes(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    drawn = Drawn(monkeypatch)
    folder = family_folder(
        tmp_path, ppo_yacht="500000,90,95.8\n2000000,450,96.9", plan_yacht="50000,60,99.9", plan_yatzy="50000,30,98.3"
    )
    out = tmp_path / "families.png"
    assert main(["--families", str(folder), "--out", str(out)]) == 0
    (figure,) = drawn.figures
    assert [axes.get_title() for axes in figure.axes] == ["yacht", "yatzy"]
    assert lines_of(figure.axes[0]) == ([([1.0], [99.9]), ([1.5, 7.5], [95.8, 96.9])], [99.0])  # plan, then ppo
    assert lines_of(figure.axes[1]) == ([([0.5], [98.3])], [99.0])
    assert all(levels_are_thin_and_curves_stand_out(axes) for axes in figure.axes)
    assert plt.imread(out).shape[:2] == (440, 1012)  # 4.6 inches a panel, 4 high, at 110 dpi
    main(["--families", str(folder), "--out", str(out), "--level", "98"])
    assert [lines_of(axes)[1] for axes in drawn.figures[-1].axes] == [[98.0], [98.0]]


@pytest.mark.parametrize("row", ["500000,x,95.8", "500000,90", "500000,90,95.8,7"])
def test_a_family_curve_with_a_bad_row_is_refused_in_one_line(tmp_path, capsys, row):
    """A value that is not a number, a row short of a field or with one too many: each refused naming the file."""
    folder = family_folder(tmp_path, ppo_yacht=row)
    with pytest.raises(SystemExit) as exit_info:
        main(["--families", str(folder), "--out", str(tmp_path / "c.png")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(f"error: {folder / 'ppo_yacht.csv'} is not a learning curve: ")
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "c.png").exists()


def test_naming_both_run_folders_and_families_is_refused_with_the_usage_code(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path), "--families", str(tmp_path), "--out", str(tmp_path / "c.png")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "error: name run folders, or --families FOLDER, not both\n"


def test_a_rule_set_name_may_hold_underscores(tmp_path, monkeypatch):
    """A file's family is its name up to the first underscore; the rest, underscores and all, names its panel."""
    drawn = Drawn(monkeypatch)
    folder = family_folder(tmp_path, plan_house_rules="50000,60,99.0")
    assert main(["--families", str(folder), "--out", str(tmp_path / "f.png")]) == 0
    assert [axes.get_title() for axes in drawn.figures[0].axes] == ["house_rules"]
    assert [text.get_text() for text in drawn.figures[0].axes[0].get_legend().get_texts()] == ["plan"]


def test_the_shipped_curves_folder_draws_the_solitaire_families_of_the_model_card(tmp_path, monkeypatch):
    """The model card's command, on the curves it ships: every solitaire family's curve, one panel per rule set (the
    table players' curves, shares of the win, are kept apart in a folder of their own)."""
    from pathlib import Path

    drawn = Drawn(monkeypatch)
    shipped = Path(__file__).resolve().parents[2] / "models" / "curves"
    assert main(["--families", str(shipped), "--out", str(tmp_path / "families.png")]) == 0
    (figure,) = drawn.figures
    assert [axes.get_title() for axes in figure.axes] == ["yacht", "yahtzee", "yatzy"]
    assert [len(lines_of(axes)[0]) for axes in figure.axes] == [2, 2, 2]  # plan and ppo in each
