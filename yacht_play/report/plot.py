"""The report's main figures as one PNG (``yacht report --plot``): six panels drawn with matplotlib."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from yacht_play.report.results import Estimate, Report


def finite_interval(estimate: Estimate) -> tuple[float, float] | None:
    """The estimate's interval as (lower end, upper end), or None: it has none, or an end is not finite."""
    low, high = estimate.low, estimate.high
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return None
    return min(low, high), max(low, high)


def intervals(ax, positions, estimates: list[Estimate], means: Sequence[float | None], *, horizontal=False, **style) -> None:
    """Each estimate's interval as an error bar from its lower end to its upper end (at its mean, of no width, when it
    has no finite interval).

    The bar is centred on its interval, not on the mean: a percentile bootstrap interval (a rating's) need not contain
    its point estimate, and a refit on the very same games lands a rounding error past it, so the distances from the
    mean to the ends, which matplotlib refuses when negative, can be. Drawn by its ends, as the page's charts draw
    it, an interval shows where it lies, and the mean is marked apart (a bar, a point).
    """
    at_mean = [(math.nan, math.nan) if m is None else (m, m) for m in means]  # no mean: nothing drawn
    ends = [finite_interval(e) or mean for e, mean in zip(estimates, at_mean)]
    centres = [(low + high) / 2 for low, high in ends]
    halves = [(high - low) / 2 for low, high in ends]
    if horizontal:
        ax.errorbar(centres, positions, xerr=halves, fmt="none", **style)
    else:
        ax.errorbar(positions, centres, yerr=halves, fmt="none", **style)


def bars(ax, labels: list[str], estimates: list[Estimate], color: str) -> None:
    """One bar per estimate at its mean, its interval as an error bar, its ``n`` under its label."""
    means = [e.mean if e.mean is not None else 0.0 for e in estimates]
    ax.bar(range(len(labels)), means, color=color)
    intervals(ax, range(len(labels)), estimates, means, ecolor="black", capsize=4)
    ax.set_xticks(
        range(len(labels)),
        [f"{label}\nn={e.n}" + ("" if finite_interval(e) is not None else "\n(no CI)") for label, e in zip(labels, estimates)],
        fontsize="small",  # relative to the font size in use (rcParams), as the other text of the figure is
    )


def save_plot(path, report: Report) -> None:
    """Six panels: agents' win rates, the histogram, loss by games played, people vs agents per decision, the people's
    temperatures and the ratings.
    """
    from yacht_env.figures import pyplot, save_png

    fig, axes = pyplot().subplots(2, 3, figsize=(18, 8))
    wins = report.agents_vs_people
    bars(axes[0, 0], [a.policy for a in wins], [a.win_rate for a in wins], "tab:blue")
    axes[0, 0].axhline(0.5, color="gray", lw=0.8, ls="--")
    axes[0, 0].set_ylim(0, 1)
    axes[0, 0].set_title("Agents' win rate against the people (tie = 1/2), 95% CI")
    hist = report.people.histogram
    if hist.n:
        edges = np.array(hist.edges)
        axes[0, 1].bar(edges[:-1], hist.counts, width=np.diff(edges), align="edge", edgecolor="white")
    axes[0, 1].set_xlabel("expected points lost per decision")
    axes[0, 1].set_ylabel("people")
    axes[0, 1].set_title(f"People's loss per decision (n={hist.n} people)")
    by = report.people.by_games_played
    bars(axes[1, 0], [b.games_played for b in by], [b.loss_per_decision for b in by], "tab:orange")
    axes[1, 0].set_xlabel("the person's game number")
    axes[1, 0].set_title("Loss per decision by games played, 95% CI")
    pooled = report.people.population.pooled.all
    graded = report.agents_graded
    bars(axes[1, 1], ["people"] + [a.policy for a in graded], [pooled] + [a.all for a in graded], "tab:green")
    axes[1, 1].set_title("Loss per decision on the same games, 95% CI")
    plot_skill_and_ratings(axes[0, 2], axes[1, 2], report)
    save_png(path, fig, dpi=100)


def plot_skill_and_ratings(skill_axes, rating_axes, report: Report) -> None:
    """Two panels: a histogram of the people's fitted temperature; the ratings with their bootstrap intervals."""
    hist = report.skill.population.histogram
    if hist.n:
        edges = np.array(hist.edges)
        skill_axes.bar(edges[:-1], hist.counts, width=np.diff(edges), align="edge", edgecolor="white", color="tab:purple")
    skill_axes.set_xlabel("fitted temperature T (points; 0 = optimal)")
    skill_axes.set_ylabel("people")
    skill_axes.set_title(f"People's skill, maximum-likelihood T (n={hist.n} people)")
    players = report.ratings.players[:25]
    means = [p.rating.mean for p in players]
    colors = ["tab:blue" if p.kind == "agent" else "tab:orange" for p in players]
    ratings = [p.rating for p in players]
    intervals(rating_axes, range(len(players)), ratings, means, horizontal=True, ecolor="gray", capsize=3)
    rating_axes.scatter(means, range(len(players)), c=colors, zorder=3)
    rating_axes.set_yticks(range(len(players)), [f"{p.name} (n={p.rating.n})" for p in players], fontsize="x-small")
    rating_axes.invert_yaxis()
    anchor = report.ratings.anchor
    rating_axes.set_title(f"Ratings (Bradley-Terry, {anchor.policy or 'mean'} = {anchor.rating:g}), 95% bootstrap CI")
