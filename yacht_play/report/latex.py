"""The report's tabulations (:func:`yacht_play.report.tabulations.tabulations`) as one LaTeX file (``yacht report --latex FILE``),
to ``input`` in a paper: each figure as ``mean [low, high]`` with an ``n`` column beside it, each caption naming the
rule set, the filters applied and what the intervals are.
"""

from __future__ import annotations

from yacht_env.safe_text import escaped_controls
from yacht_play.report.results import Estimate, Report
from yacht_play.report.tabulations import PERCENT, PLAIN, Tabulation, header_lines, tabulations

LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
LATEX_SPECIAL |= {"<": "$<$", ">": "$>$"}
# After a row's \\ (and after \item, \\*), TeX reads on for an optional [length] or a *: braced, a cell that
# starts with one stays text wherever it stands.
LATEX_SPECIAL |= {c: "{" + c + "}" for c in "[]*"}


def latex_escape(text) -> str:
    """``text`` as LaTeX that prints it: control characters written as their escapes first (a CR would end TeX's
    line, an ESC is invalid input), then every character TeX reads as markup escaped.
    """
    return "".join(LATEX_SPECIAL.get(c, c) for c in escaped_controls(str(text)))


def latex_figure(e: Estimate | None, percent: bool) -> tuple[str, str]:
    """A figure's two LaTeX cells: ``mean [low, high]`` (or the mean alone) and ``n``."""
    if e is None or e.mean is None:
        return "--", "" if e is None else str(e.n)
    fmt = (lambda v: f"{v * 100:.1f}\\%") if percent else (lambda v: f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}")
    if e.low is None:
        return fmt(e.mean), str(e.n)
    high = "--" if e.high is None else fmt(e.high)
    return f"{fmt(e.mean)} [{fmt(e.low)}, {high}]", str(e.n)


def latex_tabulation(report: Report, tabulation: Tabulation) -> str:
    """One tabulation as a LaTeX ``table`` with a ``tabular``, its caption naming what it stands on."""
    heads, align = [], []
    for header, kind in tabulation.columns:
        heads += [latex_escape(header)] if kind == PLAIN else [latex_escape(header), "$n$"]
        align += ["l"] if kind == PLAIN else ["r", "r"]
    lines = [
        "\\begin{table}[ht]",
        "\\centering",
        f"\\caption{{{latex_escape(tabulation.title)}. {latex_escape('; '.join(header_lines(report)))}.}}",
        f"\\label{{tab:{tabulation.name.replace('_', '-')}}}",
        f"\\begin{{tabular}}{{{''.join(align)}}}",
        "\\hline",
        " & ".join(heads) + " \\\\",
        "\\hline",
    ]
    for row in tabulation.rows:
        cells = []
        for value, (_, kind) in zip(row, tabulation.columns):
            cells += (
                [latex_escape("" if value is None else value)] if kind == PLAIN else list(latex_figure(value, kind == PERCENT))
            )
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def save_latex(path, report: Report) -> None:
    """Write every tabulation into one LaTeX file (to ``input`` in a paper), atomically."""
    from yacht_env.atomic_files import write_atomically

    comment = escaped_controls("; ".join(header_lines(report)))  # a CR or NUL would end or spoil the % line
    text = f"% yacht report: {comment}\n" + "\n".join(latex_tabulation(report, t) for t in tabulations(report))
    write_atomically(path, lambda handle: handle.write(text.encode()))
