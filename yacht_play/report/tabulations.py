"""The report's tabulations, its grids of figures as a paper prints them (:func:`tabulations`), and each as a CSV
file (``yacht report --csv DIR``; the LaTeX of them all is :mod:`yacht_play.report.latex`).

Every figure comes with its interval and ``n``: in a CSV as four columns (``X``, ``X_low``, ``X_high``, ``X_n``),
in LaTeX as ``mean [low, high]`` and an ``n`` column beside it. Each CSV opens with ``#`` comment lines naming the
report's rule set, the filters applied and what the intervals are; its text cells are quoted and safe to open in a
spreadsheet (:func:`yacht_env.safe_text.csv_text`), and :func:`read_csv_file` reads every cell back as it was. Each
LaTeX tabulation says the same in its caption.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from yacht_env.safe_text import CsvFile, csv_text, read_csv_text
from yacht_play.report.results import Estimate, PolicyLikeness, Report
from yacht_play.report.text import filters_text, imported_text, plural

PLAIN, FIGURE, PERCENT = "plain", "figure", "percent"

Cell = str | int | float | Estimate | None  # a plain value, or a figure (None: an empty cell)


@dataclass(frozen=True)
class Tabulation:
    """One tabulation: its file name, title, columns (``(header, kind)``) and rows of cells (a figure is an
    :class:`~yacht_play.report.results.Estimate`).
    """

    name: str
    title: str
    columns: list[tuple[str, str]]
    rows: list[list[Cell]]


def header_lines(report: Report) -> list[str]:
    """What every tabulation stands on: the games, the rule set, the filters applied, the intervals."""
    filters = " ".join(filters_text(report).split())  # a name from a browser may hold line breaks: one line each
    return [
        f"{plural(report.games, 'finished game')} under the {report.rules} rules, {plural(report.decisions, 'decision')}",
        f"filters: {filters}; {imported_text(report)}",
        f"95% intervals (normal approximation over the n shown; temperatures: profile likelihood; ratings: bootstrap); "
        f"none on n < {report.min_n}",
    ]


def tabulations(report: Report) -> list[Tabulation]:
    """Every tabulation of ``report``."""
    temperature_of = {p.name: p for p in report.skill.players}
    population = report.people.population
    return [
        Tabulation(
            "agents_vs_people",
            "Agents against the people they sat with (a tie counts 1/2)",
            [("policy", PLAIN), ("games", PLAIN), ("people", PLAIN), ("win_rate", PERCENT), ("agent_minus_person", FIGURE)],
            [[a.policy, a.games, a.people, a.win_rate, a.score_difference] for a in report.agents_vs_people],
        ),
        Tabulation(
            "people_loss",
            "The people's expected points lost per decision",
            [("decisions", PLAIN), ("over_people", FIGURE), ("pooled", FIGURE)],
            [
                ["all", population.over_people.all, population.pooled.all],
                ["reroll", population.over_people.reroll, population.pooled.reroll],
                ["row", population.over_people.row, population.pooled.row],
            ],
        ),
        Tabulation(
            "people",
            "Each person: loss per decision and fitted temperature T (points)",
            [("name", PLAIN), ("games", PLAIN), ("loss", FIGURE), ("loss_reroll", FIGURE), ("loss_row", FIGURE)]
            + [("temperature", FIGURE), ("band", PLAIN)],
            [
                [p.name, p.games, p.all, p.reroll, p.row, temperature_of[p.name].temperature, temperature_of[p.name].band]
                for p in report.people.players
                if p.name in temperature_of
            ],
        ),
        Tabulation(
            "duplicate",
            "Duplicate games, paired on the same dice (person - agent)",
            [("policy", PLAIN), ("games", PLAIN), ("people", PLAIN), ("person_minus_agent", FIGURE)],
            [[d.policy, d.games, d.people, d.person_minus_agent] for d in report.duplicate],
        ),
        Tabulation(
            "agents_graded",
            "Agents graded on the same games (expected points lost per decision)",
            [("policy", PLAIN), ("games", PLAIN), ("loss", FIGURE), ("loss_reroll", FIGURE), ("loss_row", FIGURE)],
            [[a.policy, a.games, a.all, a.reroll, a.row] for a in report.agents_graded],
        ),
        *skill_tabulations(report),
    ]


def skill_tabulations(report: Report) -> list[Tabulation]:
    """The skill bands, the likeness of each policy (overall and per band) and the ratings."""
    population = report.skill.population
    likeness_rows: list[list[Cell]] = []
    for entry in report.likeness:
        if not isinstance(entry, PolicyLikeness):
            continue
        likeness_rows.append([entry.label(), "all", population.people, entry.top1, entry.log_likelihood])
        likeness_rows += [[entry.label(), b.band, b.people, b.top1, b.log_likelihood] for b in entry.by_band if b.people]
    ratings = report.ratings
    return [
        Tabulation(
            "skill",
            "The people's fitted temperature T (points): pooled over decisions, median over people, people per band",
            [("band", PLAIN), ("people", PLAIN), ("pooled_temperature", FIGURE), ("median_temperature", PLAIN)],
            [["all", population.people, population.pooled, population.median]]
            + [[b.band, b.people, None, None] for b in population.bands],
        ),
        Tabulation(
            "likeness",
            "Human-likeness: each policy's top-1 agreement with the people and mean log-likelihood of their choices",
            [("policy", PLAIN), ("band", PLAIN), ("people", PLAIN), ("top1", PERCENT), ("log_likelihood", FIGURE)],
            likeness_rows,
        ),
        Tabulation(
            "ratings",
            f"Ratings: Bradley-Terry, Elo scale, {ratings.anchor.policy or 'mean'} = {ratings.anchor.rating:g}; "
            f"95% bootstrap intervals over games ({ratings.bootstrap} resamples)",
            [("rank", PLAIN), ("name", PLAIN), ("kind", PLAIN), ("rating", FIGURE)],
            [[rank, p.name, p.kind, p.rating] for rank, p in enumerate(ratings.players, 1)],
        ),
    ]


def figure_cells(e: Estimate | None) -> list:
    """A figure's four CSV cells: its mean, interval and ``n`` (None, an empty cell, where it has none)."""
    if e is None:
        return [None, None, None, None]
    return [e.mean, e.low, e.high, e.n]


def csv_file_text(report: Report, tabulation: Tabulation) -> str:
    """One tabulation as CSV (:func:`yacht_env.safe_text.csv_text`), its title and what it stands on as comments first."""
    heads: list[str] = []
    for header, kind in tabulation.columns:
        heads += [header] if kind == PLAIN else [header, f"{header}_low", f"{header}_high", f"{header}_n"]
    rows = []
    for row in tabulation.rows:
        cells: list = []
        for value, (_, kind) in zip(row, tabulation.columns):
            cells += [value] if kind == PLAIN else figure_cells(value)
        rows.append(cells)
    return csv_text(heads, rows, [tabulation.title, *header_lines(report)])


def save_csv(folder, report: Report) -> list[str]:
    """Write one CSV per tabulation into ``folder`` (made if missing), each atomically; the file names written."""
    from yacht_env.atomic_files import output_folder, write_atomically

    folder = output_folder(folder)
    names = []
    for tabulation in tabulations(report):
        write_atomically(folder / f"{tabulation.name}.csv", partial(write_bytes, csv_file_text(report, tabulation).encode()))
        names.append(f"{tabulation.name}.csv")
    return names


def write_bytes(data: bytes, handle) -> None:
    """Write ``data`` to the open binary file ``handle``."""
    handle.write(data)


def read_csv_file(path) -> CsvFile:
    """A file ``yacht report --csv`` wrote, every cell as it was (:func:`yacht_env.safe_text.read_csv_text`)."""
    from pathlib import Path

    return read_csv_text(Path(path).read_text(encoding="utf-8"))
