"""Every file a command writes goes through the one writer (:mod:`yacht_env.atomic_files`): a regular file or a new
path is replaced, a symbolic link's file is replaced with the link kept, anything else is refused in one line with
nothing changed."""

from __future__ import annotations

import os
import stat

import pytest

from tests.yacht_play.test_records import table_game
from yacht_play.cli import main


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A record file of one table game, and an empty serve database (None without the serve extra)."""
    folder = tmp_path_factory.mktemp("inputs")
    database = None
    try:
        from yacht_play import store
    except ImportError:
        pass
    else:
        database = str(folder / "empty.db")
        store.connect(database).dispose()
    return table_game(folder / "game.jsonl"), database


def command(kind: str, option: str, path, inputs) -> list[str]:
    record, database = inputs
    if kind == "analyze":
        return ["analyze", str(record), "--worst", "1", option, str(path)]
    if database is None:
        pytest.skip("yacht report and yacht export need the serve extra")
    return [kind, "--db", database, option, str(path)]


OUTPUTS = [("analyze", "--json"), ("report", "--json"), ("report", "--latex"), ("report", "--csv"), ("export", "-o")]


@pytest.mark.parametrize("kind, option", OUTPUTS)
def test_a_fifo_or_a_pipe_is_refused_in_one_line_and_left_as_it_was(tmp_path, capsys, inputs, kind, option):
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    assert main(command(kind, option, fifo, inputs)) == 2
    what = "folder" if option == "--csv" else "regular file"
    error = capsys.readouterr().err
    assert error.endswith(f"cannot write {fifo}: it is a FIFO, not a {what}; give a {what.split()[-1]} path\n")
    assert error.count("\n") == 1 and stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("kind, option", [output for output in OUTPUTS if output[1] != "--csv"])
def test_a_folder_is_named_as_given_not_by_a_temporary_file(tmp_path, capsys, inputs, kind, option):
    assert main(command(kind, option, tmp_path, inputs)) == 2
    error = capsys.readouterr().err
    assert error.endswith(f"cannot write {tmp_path}: it is a folder; give a file path in it\n") and error.count("\n") == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("kind, option", [output for output in OUTPUTS if output[1] != "--csv"])
def test_a_symbolic_link_keeps_pointing_at_its_file_which_gets_the_output(tmp_path, capsys, inputs, kind, option):
    (tmp_path / "target.txt").write_text("old")
    link = tmp_path / "link.out"
    link.symlink_to("target.txt")
    assert main(command(kind, option, link, inputs)) == 0, capsys.readouterr().err
    assert os.readlink(link) == "target.txt" and (tmp_path / "target.txt").read_text() != "old"


def test_a_name_that_looks_like_mathtext_is_drawn_as_written(tmp_path):
    pytest.importorskip("matplotlib")
    from yacht_env.figures import pyplot, save_png

    figure, axes = pyplot().subplots()
    axes.set_yticks([0], ["ann$\\frac{\\undefined}{x}$"])  # a name of 24 characters the browser accepts
    save_png(tmp_path / "plot.png", figure, dpi=50)
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
