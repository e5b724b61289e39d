"""The pieces of the report's page, written out by hand: a figure's cell, a plain cell, a table, a card; every text
escaped, and the colours the site's own."""

from __future__ import annotations

import re
from pathlib import Path

from yacht_play.report.page_parts import AGENT_COLOR, PEOPLE_COLOR, card, cell, html_table, plain
from yacht_play.report.results import Estimate

STATIC = Path(__file__).parents[2] / "yacht_play" / "serve" / "static"


def test_a_figure_s_cell_gives_its_mean_then_its_interval_and_n_with_the_whole_figure_as_its_tip():
    figure = Estimate(1.5, 1.25, 1.75, 12, "games")
    assert cell(figure, "loss & <gain>") == (
        "<td class='num' data-label='loss &amp; &lt;gain&gt;' title='1.500 [1.250, 1.750] (n=12)'>"
        "<span>1.500<small>[1.250, 1.750] n=12</small></span></td>"
    )
    assert cell(Estimate(0.125, 0.1, 0.15, 40, "games"), "won", percent=True) == (
        "<td class='num' data-label='won' title='12.5% [10.0%, 15.0%] (n=40)'>"
        "<span>12.5%<small>[10.0%, 15.0%] n=40</small></span></td>"
    )


def test_a_figure_without_an_interval_says_so_and_one_without_a_mean_gives_its_note():
    few = Estimate(2.34, None, None, 5, "people", "too few people (n=5 < 10)")
    assert cell(few, "T", digits=1) == (
        "<td class='num' data-label='T' title='2.3 (n=5; too few people (n=5 &lt; 10))'>"
        "<span>2.3<small>n=5, no interval</small></span></td>"
    )
    assert cell(Estimate(None, None, None, 0, "games", "n=0 < 1"), "a'b") == (
        "<td class='num' data-label='a&#x27;b'><span>–<small>n=0 &lt; 1</small></span></td>"
    )
    assert cell(Estimate(None, None, None, 0, "games"), "x") == (
        "<td class='num' data-label='x'><span>–<small>no data</small></span></td>"
    )


def test_a_plain_cell_a_table_and_a_card_escape_their_texts():
    assert plain("<b>ann</b>", "name & <x>") == ("<td data-label='name &amp; &lt;x&gt;'><span>&lt;b&gt;ann&lt;/b&gt;</span></td>")
    assert plain(3, "n", number=True) == "<td class=num data-label='n'><span>3</span></td>"
    assert html_table("c", ["a"], [], "nothing & <none>") == "<p class='muted'>nothing &amp; &lt;none&gt;</p>"
    assert html_table("<cap>", ["<a>", "b"], ["<td>1</td>", "<td>2</td>"], "none") == (
        "<table class='report'><caption class='visually-hidden'>&lt;cap&gt;</caption>"
        "<thead><tr><th scope='col'>&lt;a&gt;</th><th scope='col'>b</th></tr></thead>"
        "<tbody><tr><td>1</td></tr><tr><td>2</td></tr></tbody></table>"
    )
    assert card("A & <B>", "<p>x</p>", "<p>y</p>") == "<section class='card'><h2>A &amp; &lt;B&gt;</h2><p>x</p><p>y</p></section>"
    assert card("A") == "<section class='card'><h2>A</h2></section>"


def test_the_report_s_agent_and_people_colours_are_the_site_s_agent_and_accent_colours():
    css = (STATIC / "yacht.css").read_text()
    assert re.search(r"--agent:\s*(#[0-9a-f]{6});", css).group(1) == AGENT_COLOR
    assert re.search(r"--accent:\s*(#[0-9a-f]{6});", css).group(1) == PEOPLE_COLOR
