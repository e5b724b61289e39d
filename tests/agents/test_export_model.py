"""``python -m agents.learned.export_model``: a trusted zip to a model file, in-process (its subprocess run is slow)."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from agents.learned.export_model import main
from agents.learned.model_files import load_model_file

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_ZIP, SHIPPED = ROOT / "models" / "ppo.zip", ROOT / "models" / "ppo.safetensors"


def test_a_zip_is_written_next_to_itself_by_default_and_reads_back_as_the_shipped_file(tmp_path, capsys):
    zip_path = tmp_path / "run.zip"
    shutil.copy(SHIPPED_ZIP, zip_path)
    assert main([str(zip_path)]) == 0
    out = tmp_path / "run.safetensors"
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert load_model_file(out).metadata == load_model_file(SHIPPED).metadata
    exported, shipped = load_file(out), load_file(SHIPPED)
    assert sorted(exported) == sorted(shipped)
    for name, tensor in exported.items():
        np.testing.assert_array_equal(tensor, shipped[name])


@pytest.mark.parametrize("name", ["model.bin", "model.zip", "model"])
def test_an_output_that_is_not_a_model_file_name_is_refused_before_the_zip_is_read(tmp_path, capsys, name):
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "missing.zip"), str(tmp_path / name)])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"error: the output file must end in .safetensors, got {str(tmp_path / name)!r}")


def test_a_zip_that_is_no_model_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    zip_path = tmp_path / "notes.zip"
    zip_path.write_bytes(b"not a zip")
    assert main([str(zip_path), str(tmp_path / "out.safetensors")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and len(captured.err.splitlines()) == 1
    assert not (tmp_path / "out.safetensors").exists()
