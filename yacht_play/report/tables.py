"""The report's tables as a paper prints them: one CSV file per table (``yacht report --csv DIR``) and one LaTeX file
of them all (``--latex FILE``).

Every figure comes with its interval and ``n``: in a CSV as four columns (``X``, ``X_low``, ``X_high``, ``X_n``),
in LaTeX as ``mean [low, high]`` and an ``n`` column beside it. Each CSV opens with ``#`` comment lines naming the
report's rule set, the filters applied and what the intervals are (``pandas.read_csv(path, comment="#")`` reads it);
each LaTeX table says the same in its caption.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from yacht_play.report.estimates import imported_text, plural

PLAIN, FIGURE, PERCENT = "plain", "figure", "percent"
LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
LATEX_SPECIAL |= {"<": "$<$", ">": "$>$"}


@dataclass
class Table:
    """One table: its file name, title, columns (``(header, kind)``) and rows of values (a figure is an estimate dict)."""

    name: str
    title: str
    columns: list[tuple[str, str]]
    rows: list[list]


def header_lines(report: dict) -> list[str]:
    """What every table stands on: the games, the rule set, the filters applied, the intervals."""
    filters = ", ".join(f"{k}={v}" for k, v in report["filters"].items() if v) or "none"
    filters = " ".join(filters.split())  # a name from a browser may hold line breaks: one line each
    return [
        f"{plural(report['games'], 'finished game')} under the {report['rules']} rules, "
        f"{plural(report['decisions'], 'decision')}",
        f"filters: {filters}; {imported_text(report)}",
        f"95% intervals (normal approximation over the n shown; temperatures: profile likelihood; ratings: bootstrap); "
        f"none on n < {report['min_n']}",
    ]


def tables(report: dict) -> list[Table]:
    """Every table of ``report``."""
    temperature_of = {p["name"]: p for p in report["skill"]["players"]}
    people = report["people"]
    out = [
        Table(
            "agents_vs_people",
            "Agents against the people they sat with (a tie counts 1/2)",
            [("policy", PLAIN), ("games", PLAIN), ("people", PLAIN), ("win_rate", PERCENT), ("agent_minus_person", FIGURE)],
            [[a["policy"], a["games"], a["people"], a["win_rate"], a["score_difference"]] for a in report["agents_vs_people"]],
        ),
        Table(
            "people_loss",
            "The people's expected points lost per decision",
            [("decisions", PLAIN), ("over_people", FIGURE), ("pooled", FIGURE)],
            [[k, people["population"]["over_people"][k], people["population"]["pooled"][k]] for k in ("all", "reroll", "row")],
        ),
        Table(
            "people",
            "Each person: loss per decision and fitted temperature T (points)",
            [("name", PLAIN), ("games", PLAIN), ("loss", FIGURE), ("loss_reroll", FIGURE), ("loss_row", FIGURE)]
            + [("temperature", FIGURE), ("band", PLAIN)],
            [
                [p["name"], p["games"], p["all"], p["reroll"], p["row"]]
                + [temperature_of[p["name"]]["temperature"], temperature_of[p["name"]]["band"]]
                for p in people["players"]
                if p["name"] in temperature_of
            ],
        ),
        Table(
            "duplicate",
            "Duplicate games, paired on the same dice (person - agent)",
            [("policy", PLAIN), ("games", PLAIN), ("people", PLAIN), ("person_minus_agent", FIGURE)],
            [[d["policy"], d["games"], d["people"], d["person_minus_agent"]] for d in report["duplicate"]],
        ),
        Table(
            "agents_graded",
            "Agents graded on the same games (expected points lost per decision)",
            [("policy", PLAIN), ("games", PLAIN), ("loss", FIGURE), ("loss_reroll", FIGURE), ("loss_row", FIGURE)],
            [[a["policy"], a["games"], a["all"], a["reroll"], a["row"]] for a in report["agents_graded"]],
        ),
        *skill_tables(report),
    ]
    return out


def skill_tables(report: dict) -> list[Table]:
    """The skill bands, the likeness of each policy (overall and per band) and the ratings."""
    population = report["skill"]["population"]
    likeness_rows = []
    for entry in report["likeness"]:
        if "top1" not in entry:
            continue
        label = entry["policy"] + (f" (T={entry['temperature']:.3g})" if "temperature" in entry else "")
        likeness_rows.append([label, "all", population["people"], entry["top1"], entry["log_likelihood"]])
        likeness_rows += [
            [label, b["band"], b["people"], b["top1"], b["log_likelihood"]] for b in entry["by_band"] if b["people"]
        ]
    ratings = report["ratings"]
    return [
        Table(
            "skill",
            "The people's fitted temperature T (points): pooled over decisions, median over people, people per band",
            [("band", PLAIN), ("people", PLAIN), ("pooled_temperature", FIGURE), ("median_temperature", PLAIN)],
            [["all", population["people"], population["pooled"], population["median"]]]
            + [[b["band"], b["people"], None, None] for b in population["bands"]],
        ),
        Table(
            "likeness",
            "Human-likeness: each policy's top-1 agreement with the people and mean log-likelihood of their choices",
            [("policy", PLAIN), ("band", PLAIN), ("people", PLAIN), ("top1", PERCENT), ("log_likelihood", FIGURE)],
            likeness_rows,
        ),
        Table(
            "ratings",
            f"Ratings: Bradley-Terry, Elo scale, {ratings['anchor']['policy'] or 'mean'} = {ratings['anchor']['rating']:g}; "
            f"95% bootstrap intervals over games ({ratings['bootstrap']} resamples)",
            [("rank", PLAIN), ("name", PLAIN), ("kind", PLAIN), ("rating", FIGURE)],
            [[rank, p["name"], p["kind"], p["rating"]] for rank, p in enumerate(ratings["players"], 1)],
        ),
    ]


def csv_text(report: dict, table: Table) -> str:
    """One table as CSV, its header comment first."""
    buffer = io.StringIO()
    for line in [table.title, *header_lines(report)]:
        buffer.write(f"# {line}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    heads = []
    for header, kind in table.columns:
        heads += [header] if kind == PLAIN else [header, f"{header}_low", f"{header}_high", f"{header}_n"]
    writer.writerow(heads)
    for row in table.rows:
        cells = []
        for value, (_, kind) in zip(row, table.columns):
            if kind == PLAIN:
                cells.append("" if value is None else value)
            else:
                e = value or {}
                cells += ["" if e.get(k) is None else e[k] for k in ("mean", "low", "high", "n")]
        writer.writerow(cells)
    return buffer.getvalue()


def save_csv(folder, report: dict) -> list[str]:
    """Write one CSV per table into ``folder`` (made if missing), each atomically; the file names written."""
    from pathlib import Path

    from yacht_env.atomic_files import write_atomically

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for table in tables(report):
        text = csv_text(report, table)
        write_atomically(folder / f"{table.name}.csv", lambda handle, text=text: handle.write(text.encode()))
        names.append(f"{table.name}.csv")
    return names


def latex_escape(text) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(LATEX_SPECIAL.get(c, c) for c in str(text))


def latex_figure(e: dict | None, percent: bool) -> tuple[str, str]:
    """A figure's two LaTeX cells: ``mean [low, high]`` (or the mean alone) and ``n``."""
    if not e or e.get("mean") is None:
        return "--", "" if not e else str(e["n"])
    fmt = (lambda v: f"{v * 100:.1f}\\%") if percent else (lambda v: f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}")
    if e["low"] is None:
        return fmt(e["mean"]), str(e["n"])
    high = "--" if e["high"] is None else fmt(e["high"])
    return f"{fmt(e['mean'])} [{fmt(e['low'])}, {high}]", str(e["n"])


def latex_table(report: dict, table: Table) -> str:
    """One table as a LaTeX ``table`` with a ``tabular``, its caption naming what it stands on."""
    heads, align = [], []
    for header, kind in table.columns:
        heads += [latex_escape(header)] if kind == PLAIN else [latex_escape(header), "$n$"]
        align += ["l"] if kind == PLAIN else ["r", "r"]
    lines = [
        "\\begin{table}[ht]",
        "\\centering",
        f"\\caption{{{latex_escape(table.title)}. {latex_escape('; '.join(header_lines(report)))}.}}",
        f"\\label{{tab:{table.name.replace('_', '-')}}}",
        f"\\begin{{tabular}}{{{''.join(align)}}}",
        "\\hline",
        " & ".join(heads) + " \\\\",
        "\\hline",
    ]
    for row in table.rows:
        cells = []
        for value, (_, kind) in zip(row, table.columns):
            cells += (
                [latex_escape("" if value is None else value)] if kind == PLAIN else list(latex_figure(value, kind == PERCENT))
            )
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def save_latex(path, report: dict) -> None:
    """Write every table into one LaTeX file (to ``input`` in a paper), atomically."""
    from yacht_env.atomic_files import write_atomically

    text = f"% yacht report: {'; '.join(header_lines(report))}\n" + "\n".join(latex_table(report, t) for t in tables(report))
    write_atomically(path, lambda handle: handle.write(text.encode()))
