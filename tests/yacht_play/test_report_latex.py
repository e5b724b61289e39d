"""The report's LaTeX, written out by hand: each character TeX reads as markup escaped, a figure's cells, one table
with its caption and label, and the file of them all under its comment line."""

from __future__ import annotations

from yacht_play.report import latex
from yacht_play.report.build import build_report
from yacht_play.report.filters import Filters
from yacht_play.report.results import Estimate
from yacht_play.report.tabulations import FIGURE, PERCENT, PLAIN, Tabulation, tabulations

HEADERS = "0 finished games under the yacht rules, 0 decisions; filters: player={}; no imported game left out; "
HEADERS += "95{} intervals (normal approximation over the n shown; temperatures: profile likelihood; ratings: bootstrap); "
HEADERS += "none on n {} 10"


def test_each_character_tex_reads_as_markup_is_escaped_and_the_rest_is_left_as_it_is():
    assert latex.latex_escape("a&b%c$d#e_f{g}h") == "a\\&b\\%c\\$d\\#e\\_f\\{g\\}h"
    assert latex.latex_escape("~^\\x") == "\\textasciitilde{}\\^{}\\textbackslash{}x"
    assert latex.latex_escape("x<y>z") == "x$<$y$>$z"
    assert latex.latex_escape("[1cm]*") == "{[}1cm{]}{*}"
    assert latex.latex_escape("ann é 2") == "ann é 2"
    assert latex.latex_escape("cr\rx") == "cr\\textbackslash{}rx"  # the CR as its escape, then its backslash escaped
    assert latex.latex_escape(12) == "12"


def test_a_figure_s_cells_give_a_large_value_without_decimals_and_a_percentage_to_a_tenth():
    assert latex.latex_figure(Estimate(100.0, 99.5, 250.7, 7, "games"), False) == ("100 [99.500, 251]", "7")
    assert latex.latex_figure(Estimate(-100.4, None, None, 2, "games"), False) == ("-100", "2")
    assert latex.latex_figure(Estimate(0.1234, 0.1, None, 30, "games"), True) == ("12.3\\% [10.0\\%, --]", "30")
    assert latex.latex_figure(Estimate(0.25, None, None, 4, "games", "few"), True) == ("25.0\\%", "4")


def test_a_tabulation_is_one_table_with_its_caption_label_columns_and_a_row_per_row():
    report = build_report([], Filters(player="a_b & c"))
    columns = [("name", PLAIN), ("loss & gain", FIGURE), ("share", PERCENT)]
    rows = [
        ["ann_1", Estimate(1.5, 1.25, 1.75, 12, "games"), Estimate(0.25, None, None, 4, "games", "few")],
        [None, None, Estimate(None, None, None, 0, "games")],
        [3, Estimate(100.0, 99.5, 250.7, 7, "games"), Estimate(0.1234, 0.1, None, 30, "games")],
    ]
    text = latex.latex_tabulation(report, Tabulation("my_table_x", "Loss_1", columns, rows))
    assert text.split("\n") == [
        "\\begin{table}[ht]",
        "\\centering",
        "\\caption{Loss\\_1. " + HEADERS.format("a\\_b \\& c", "\\%", "$<$") + ".}",
        "\\label{tab:my-table-x}",
        "\\begin{tabular}{lrrrr}",
        "\\hline",
        "name & loss \\& gain & $n$ & share & $n$ \\\\",
        "\\hline",
        "ann\\_1 & 1.500 [1.250, 1.750] & 12 & 25.0\\% & 4 \\\\",
        " & -- &  & -- & 0 \\\\",
        "3 & 100 [99.500, 251] & 7 & 12.3\\% [10.0\\%, --] & 30 \\\\",
        "\\hline",
        "\\end{tabular}",
        "\\end{table}",
        "",
    ]


def test_the_file_opens_with_the_headers_as_a_comment_and_holds_every_table_a_blank_line_apart(tmp_path):
    report = build_report([], Filters(player="a\x1bb"))
    latex.save_latex(tmp_path / "t.tex", report)
    text = (tmp_path / "t.tex").read_text()
    first, rest = text.split("\n", 1)
    assert first == "% yacht report: " + HEADERS.format("a\\x1bb", "%", "<")  # the ESC as its escape
    count = len(tabulations(report))
    assert rest.startswith("\\begin{table}[ht]\n") and rest.endswith("\\end{table}\n")
    assert rest.count("\\end{table}\n\n\\begin{table}[ht]\n") == count - 1 and rest.count("\\begin{table}") == count
