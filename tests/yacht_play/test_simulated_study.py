"""``examples/simulated_study.py``: serve, simulate, report, from one command, as the People page of the docs tells a reader."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.yacht_play.serve_support import ROOT

pytest.importorskip("starlette", reason="the study needs the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the simulated people need httpx")


def study(*options):
    return subprocess.run(
        [sys.executable, "examples/simulated_study.py", *options], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_a_small_study_recovers_a_perfect_and_a_careless_group(tmp_path):
    out = tmp_path / "study"
    done = study("--out", str(out), "--temperatures", "0", "4", "--players", "2", "--games", "2", "--agents", "optimal")
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip(): line for line in done.stdout.splitlines() if line.startswith("| ")}
    perfect, careless = rows["0"].split("|"), rows["4"].split("|")
    assert perfect[3].strip() == "0.000" and perfect[4].strip().startswith("0.000 (n=2; too few people")
    assert float(careless[3]) > 1.0 and float(careless[4].split()[0]) > 1.0  # temperature 4 loses points
    report = json.loads((out / "report.json").read_text())
    assert report["games"] == 8 and sorted(p["name"] for p in report["people"]["players"]) == [
        "t0-0000",
        "t0-0001",
        "t4-0000",
        "t4-0001",
    ]
    assert (out / "report.png").read_bytes()[:4] == b"\x89PNG" and "finished games" in (out / "report.txt").read_text()
    assert (out / "study.db").exists()
    again = study("--out", str(out))  # a study never writes over another
    assert again.returncode == 2 and "not an empty folder" in again.stderr and "Traceback" not in again.stderr
    refused = study("--out", str(tmp_path / "other"), "--agents", "optimal,bogus")
    assert refused.returncode == 2 and "unknown policy 'bogus'" in refused.stderr and "Traceback" not in refused.stderr
