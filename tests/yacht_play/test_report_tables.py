"""The report's tables as CSV and LaTeX: every figure with its interval and n, the filters in the header."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from yacht_play import report_tables
from yacht_play.report import Filters, build_report


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report of two duplicate games against greedy by a person who always plays the optimum, through the API."""
    pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
    from tests.yacht_play.test_serve_api import TestClient
    from yacht_play import store
    from yacht_play.serve.app import create_app
    from yacht_play.serve.games import GameService
    from yacht_play.simulate import Chooser, Played, run_sync

    deals = np.random.default_rng(7)  # the server's dice, seeded: one fixed draw
    patch = pytest.MonkeyPatch()
    patch.setattr("yacht_play.serve.games.secrets.randbits", lambda bits: int(deals.integers(0, 2**bits)))
    service = GameService(store.connect(str(tmp_path_factory.mktemp("tables") / "yacht.db")), ["greedy"])
    with TestClient(create_app(service)) as client:
        chooser = Chooser(0.0, np.random.default_rng(0))
        for _ in range(2):
            assert not run_sync(client, chooser, Played("ann & <b>", "duplicate", ["greedy"])).errors
    patch.undo()
    games = store.all_games(service.engine, finished_only=True)
    return build_report(games, Filters(player="ann & <b>"), service.grader)


def test_one_csv_per_table_with_interval_columns_and_the_filters(tmp_path, report):
    names = report_tables.save_csv(tmp_path / "tables", report)
    assert set(names) >= {"ratings.csv", "likeness.csv", "skill.csv", "people.csv", "agents_vs_people.csv"}
    text = (tmp_path / "tables" / "people.csv").read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any("filters: player=ann & <b>" in line for line in comments)
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert rows[0]["name"] == "ann & <b>" and rows[0]["temperature"] == "0.0" and rows[0]["temperature_low"] == "0.0"
    assert {"loss", "loss_low", "loss_high", "loss_n", "temperature_high", "temperature_n"} <= set(rows[0])
    assert int(rows[0]["temperature_n"]) == report["skill"]["players"][0]["temperature"]["n"] > 0
    lines = (tmp_path / "tables" / "ratings.csv").read_text().splitlines()
    ratings = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert {r["name"] for r in ratings} == {"ann & <b>", "greedy"} and all(r["rating_n"] == "2" for r in ratings)
    ann = next(p["rating"] for p in report["ratings"]["players"] if p["name"] == "ann & <b>")
    row = next(r for r in ratings if r["name"] == "ann & <b>")
    assert [float(row[k]) for k in ("rating", "rating_low", "rating_high")] == [ann["mean"], ann["low"], ann["high"]]
    lines = (tmp_path / "tables" / "agents_graded.csv").read_text().splitlines()
    greedy = next(csv.DictReader(line for line in lines if not line.startswith("#")))
    loss = report["agents_graded"][0]["all"]
    assert [float(greedy[k]) for k in ("loss", "loss_low", "loss_high")] == [loss["mean"], loss["low"], loss["high"]]
    assert loss["low"] < loss["mean"] < loss["high"] and int(greedy["loss_n"]) == loss["n"]


def test_latex_escapes_names_and_gives_intervals_and_n(tmp_path, report):
    path = tmp_path / "tables.tex"
    report_tables.save_latex(path, report)
    text = path.read_text()
    assert text.count("\\begin{tabular}") == len(report_tables.tables(report))
    assert "ann \\& $<$b$>$" in text and "ann & <b>" not in text.split("\n", 1)[1]  # only the % comment line is raw
    assert "player=ann \\& $<$b$>$" in text  # the caption names the filters
    rated = next(line for line in text.splitlines() if line.startswith("2 & greedy") or line.startswith("1 & greedy"))
    assert rated.endswith("& 2 \\\\") and "$n$" in text  # the rating and its n (2 games)


def test_a_figure_without_interval_or_mean():
    assert report_tables.latex_figure({"mean": 0.5, "low": None, "high": None, "n": 3}, False) == ("0.500", "3")
    assert report_tables.latex_figure({"mean": 0.5, "low": 0.4, "high": 0.6, "n": 30}, True) == (
        "50.0\\% [40.0\\%, 60.0\\%]",
        "30",
    )
    assert report_tables.latex_figure({"mean": None, "low": None, "high": None, "n": 0}, False) == ("--", "0")
    assert report_tables.latex_figure({"mean": 2.0, "low": 1.0, "high": None, "n": 30}, False) == ("2.000 [1.000, --]", "30")
    lines = report_tables.header_lines(
        {"games": 1, "decisions": 2, "rules": "yacht", "min_n": 10, "filters": {"player": "a\nb", "include_imported": False}}
        | {"imported_games_left_out": 0, "imported_games": 0}
    )
    assert "filters: player=a b;" in lines[1] and all("\n" not in line for line in lines)


def test_yacht_report_writes_the_tables_and_refuses_bad_names_in_one_line(tmp_path, capsys):
    pytest.importorskip("sqlalchemy", reason="the store needs the serve extra")
    from yacht_play import store
    from yacht_play.cli import main

    database = str(tmp_path / "empty.db")
    store.connect(database).dispose()
    assert main(["report", "--db", database, "--csv", str(tmp_path / "csv"), "--latex", str(tmp_path / "t.tex")]) == 0
    assert (tmp_path / "csv" / "ratings.csv").read_text().startswith("# Ratings") and (tmp_path / "t.tex").exists()
    capsys.readouterr()
    assert main(["report", "--db", database, "--policy", "bogus"]) == 2
    refused = capsys.readouterr().err
    assert refused.startswith("yacht report: unknown policy 'bogus'; expected one of random,") and refused.count("\n") == 1
    (tmp_path / "a-file").write_text("")
    assert main(["report", "--db", database, "--csv", str(tmp_path / "a-file")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cannot write the tables" in error and "Traceback" not in error
