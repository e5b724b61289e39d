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


def test_curves_of_two_families_make_one_panel_per_rule_set(tmp_path, capsys):
    import matplotlib.pyplot as plt

    folder = tmp_path / "curves"
    folder.mkdir()
    header = "steps,wall_seconds,percent_of_optimal\n"
    (folder / "ppo_yacht.csv").write_text(header + "500000,110,95.8\n2000000,429,96.9\n")
    (folder / "plan_yacht.csv").write_text(header + "50000,60,99.9\n")
    (folder / "plan_yatzy.csv").write_text(header + "50000,65,98.3\n")
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
