"""The report on nothing: no finished game passes the filters (a fresh store, a player nobody is, a date after every
game) while a model is among the policies it measures. Every output gives empty figures: never a traceback or a 500.

Before: ``yacht report --db EMPTY --policy ppo:yacht`` printed a 44-line traceback (``cannot reshape tensor of 0
elements``) and a server offering ``ppo:yacht`` answered 500 on ``/report`` and ``/api/report``.
"""

from __future__ import annotations

import json
import warnings

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")
pytest.importorskip("torch", reason="ppo: models need the train extra")

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from yacht_play import store as db  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402

MODELS = ("ppo:yacht", "plan:yacht")


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("empty") / "yacht.db"
    db.migrate(db.connect(str(path)))
    return path


def test_yacht_report_on_no_game_prints_and_writes_every_output_empty(empty_db, tmp_path, capsys):
    out = tmp_path / "out"
    models = [argument for model in MODELS for argument in ("--policy", model)]
    outputs = [
        "--json",
        str(out / "r.json"),
        "--plot",
        str(out / "r.png"),
        "--csv",
        str(out / "csv"),
        "--latex",
        str(out / "t.tex"),
    ]
    out.mkdir()
    assert main(["report", "--db", str(empty_db), *models, *outputs]) == 0
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err and printed.out.startswith("0 finished games")
    for model in MODELS:
        assert f"  {model}: top-1 agreement - (no decisions)" in printed.out
    document = json.loads((out / "r.json").read_text())
    measured = {entry["policy"]: entry for entry in document["likeness"]}
    assert all(measured[model]["decisions"] == 0 and "note" not in measured[model] for model in MODELS)
    assert (out / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert list((out / "csv").glob("*.csv")) and (out / "t.tex").read_text().strip()


@pytest.mark.parametrize("query", ["", "?player=nobody", "?since=9999-12-31"])
def test_a_server_offering_models_answers_the_report_on_no_game(empty_db, query):
    service = GameService(db.connect(str(empty_db)), ["ppo:yacht", "greedy"])
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        document = client.get(f"/api/report{query}")
        assert document.status_code == 200, document.text
        page = client.get(f"/report{query}")
        assert page.status_code == 200, page.text
    assert document.json()["games"] == 0
    (entry,) = [e for e in document.json()["likeness"] if e["policy"] == "ppo:yacht"]
    assert entry["decisions"] == 0 and "note" not in entry
