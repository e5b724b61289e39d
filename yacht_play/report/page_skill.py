"""The report page's cards for the people's skill, each policy's likeness to them and the ratings, in the style of
:mod:`yacht_play.report.page` (every text from the database escaped there and here).
"""

from __future__ import annotations

from yacht_play.report.page_parts import AGENT_COLOR, PEOPLE_COLOR, card, cell, e, html_table, plain
from yacht_play.report.results import Estimate, PolicyLikeness, Report
from yacht_play.report.svg_charts import histogram_chart, interval_chart, range_chart
from yacht_play.report.text import WHY_BRADLEY_TERRY, plural, rated_modes


def temperature_cell(fit: Estimate, label: str) -> str:
    """A fitted temperature's cell: as :func:`cell`, with short words where it has no finite value or no upper end."""
    if fit.mean is None:
        tip = e(fit.note or "")
        return f"<td class='num' data-label='{e(label)}' title='{tip}'><span>–<small>no finite T</small></span></td>"
    if fit.low is not None and fit.high is None:
        detail = f"[{fit.low:.3f}, no upper end] n={fit.n}"
        return f"<td class='num' data-label='{e(label)}'><span>{fit.mean:.3f}<small>{e(detail)}</small></span></td>"
    return cell(fit, label)


def skill_section(report: Report) -> str:
    """The people's fitted temperatures: the population's, a histogram, the skill bands, each person's."""
    population = report.skill.population
    median = "–" if population.median is None else f"{population.median:.3f}"
    summary = [
        plain("pooled over decisions", "figure") + temperature_cell(population.pooled, "T"),
        plain("median over people", "figure") + plain(median, "T", number=True),
    ]
    histogram = population.histogram
    bands = [plain(b.band, "band") + plain(b.people, "people", number=True) for b in population.bands]
    per_person = [
        plain(p.name, "name")
        + plain(p.games, "games", number=True)
        + temperature_cell(p.temperature, "T")
        + plain(p.band, "band")
        for p in report.skill.players
    ]
    return card(
        f"Skill: each person's temperature T ({plural(population.people, 'person', 'people')})",
        "<p class='muted small'>The maximum-likelihood temperature (points) of a softmax over the optimal Q-values of "
        "the person's choices: 0 always plays the optimum. 95% profile-likelihood intervals.</p>",
        html_table("The population's temperature", ["figure", "T (points)"], summary, ""),
        histogram_chart(histogram.edges, histogram.counts, "a histogram of the people's fitted temperature", PEOPLE_COLOR)
        if histogram.n
        else "",
        html_table("People per skill band", ["band", "people"], bands, "No person yet."),
        "<h3>Per person</h3>",
        html_table("Each person's temperature", ["name", "games", "T (points)", "band"], per_person, "No person yet."),
    )


def likeness_section(report: Report) -> str:
    """Each policy's top-1 agreement with the people and the mean log-likelihood of their choices, by skill band."""
    measured = [entry for entry in report.likeness if isinstance(entry, PolicyLikeness)]
    rows = []
    for entry in measured:
        likelihood = lambda f: cell(f, "log-likelihood") if f is not None else plain("–", "log-likelihood")  # noqa: E731
        rows.append(plain(entry.label(), "policy") + plain("all", "band") + cell(entry.top1, "top-1", percent=True))
        rows[-1] += likelihood(entry.log_likelihood)
        for band in entry.by_band:
            if band.people:
                rows.append(plain(entry.label(), "policy") + plain(band.band, "band") + cell(band.top1, "top-1", percent=True))
                rows[-1] += likelihood(band.log_likelihood)
    skipped = "".join(
        f"<p class='muted small'>{e(entry.policy)}: not measured ({e(entry.note)})</p>"
        for entry in report.likeness
        if not isinstance(entry, PolicyLikeness)
    )
    chart = interval_chart(
        [(entry.label(), entry.top1) for entry in measured],
        "each policy's top-1 agreement with the people's choices, with its 95% interval",
        AGENT_COLOR,
        percent=True,
    )
    return card(
        "Human-likeness: each policy on the people's decisions",
        chart if measured else "",
        html_table(
            "Human-likeness", ["policy", "band", "top-1 agreement", "mean log-likelihood"], rows, "No decision of a person."
        ),
        skipped,
    )


def ratings_section(report: Report) -> str:
    """One rating scale for people and agents, best first, with bootstrap intervals."""
    ratings = report.ratings
    anchor = ratings.anchor
    players = ratings.players
    rows = [
        plain(rank, "rank", number=True)
        + plain(p.name, "name")
        + plain("agent" if p.kind == "agent" else "person", "kind")
        + cell(p.rating, "rating", 0)
        for rank, p in enumerate(players, 1)
    ]
    anchored = f"{anchor.policy} = {anchor.rating:g}" if anchor.policy else f"the mean = {anchor.rating:g}"
    chart = range_chart(
        [(p.name, p.rating) for p in players[:30]],
        "the rating of each person and agent with its 95% bootstrap interval",
        AGENT_COLOR,
        reference=anchor.rating if anchor.policy else None,
    )
    modes = rated_modes(ratings)
    return card(
        "Ratings: people and agents on one scale",
        f"<p class='muted small'>Bradley-Terry on the Elo scale, {e(anchored)}; 95% bootstrap intervals over "
        f"{plural(ratings.games, 'game')} ({ratings.bootstrap} resamples). {e(WHY_BRADLEY_TERRY)}."
        + ("" if modes is None else f" {e(modes[0].upper() + modes[1:])}.")
        + "</p>",
        chart if players else "",
        html_table("Ratings", ["rank", "name", "kind", "rating"], rows, "No game at a table yet."),
    )
