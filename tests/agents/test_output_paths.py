"""Every command that writes a file refuses an output path the writer (:mod:`yacht_env.atomic_files`) would refuse
before its work, in one line with exit status 2: a folder, a FIFO, a device (here through a link to ``/dev/full``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.evaluate import main as evaluate_main
from agents.evaluation.ceiling import main as ceiling_main
from agents.learned.export_model import main as export_main
from agents.training.curves import main as curves_main

ROOT = Path(__file__).resolve().parents[2]


def bad_output(kind: str, path: Path) -> Path:
    """An output path ``path`` that no file can be written to: a folder, a FIFO, or a link to ``/dev/full``."""
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/full")
    return path


def curve_run(folder: Path) -> Path:
    folder.mkdir()
    lines = "steps,wall_seconds,mean_score,percent_of_optimal,regret_per_decision\n500000,100.0,163.0,96.0,0.16\n"
    (folder / "learning_curve.csv").write_text(lines)
    return folder


COMMANDS = {  # each command with its output path given: (its main, argv, the output's name)
    "evaluate --table": (evaluate_main, ["--table", "greedy,random", "--games", "4", "--no-progress", "--json"], "t.json"),
    "ceiling": (ceiling_main, ["--games", "4", "--json"], "c.json"),
    "export_model": (export_main, [str(ROOT / "models" / "ppo.zip")], "m.safetensors"),
    "curves": (curves_main, ["--out"], "c.png"),
}


@pytest.mark.parametrize("kind", ["folder", "fifo", "device"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_output_path_is_refused_in_one_line_before_the_work(command, kind, tmp_path, capsys):
    main, argv, name = COMMANDS[command]
    out = bad_output(kind, tmp_path / name)
    argv = [*argv, str(out)]
    if command == "curves":
        argv = [str(curve_run(tmp_path / "run")), *argv]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip().splitlines() == [captured.err.strip()]
    assert captured.err.startswith(f"error: cannot write {out}: it is ")
    assert captured.out == ""  # refused before the work: no games played, no model loaded, nothing drawn
    assert out.is_symlink() if kind == "device" else out.exists()
