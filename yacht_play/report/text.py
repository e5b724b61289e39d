"""The report as plain text (:func:`text_lines`, what ``yacht report`` prints), and the words its text, its page and
its tables share: a figure with its interval and ``n`` (:func:`figure`), counted nouns (:func:`plural`), the
imported-games line.
"""

from __future__ import annotations

from yacht_play.report.results import Estimate, PolicyLikeness, Ratings, Report

WHY_BRADLEY_TERRY = (
    "Bradley-Terry rather than TrueSkill or OpenSkill: the games are a finished batch, so one order-free "
    "maximum-likelihood fit with intervals resampled over games"
)


def plural(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the noun that goes with it: ``1 game``, ``2 games``, ``1 person``, ``3 people``."""
    return f"{count} {one if count == 1 else many or one + 's'}"


def figure(e: Estimate, digits: int = 3, percent: bool = False) -> str:
    """``mean [low, high] (n=...)``, or the mean and the note when there is no interval."""
    if e.mean is None:
        return f"- ({e.note})"
    scale = 100.0 if percent else 1.0
    fmt = (lambda v: f"{v * scale:.1f}%") if percent else (lambda v: f"{v:.{digits}f}")
    if e.low is None:
        return f"{fmt(e.mean)} (n={e.n}; {e.note})"
    return f"{fmt(e.mean)} [{fmt(e.low)}, {fmt(e.high)}] (n={e.n})"


def imported_text(report: Report, how: str = "--include-imported") -> str:
    """What the report did with the games ``yacht import`` brought in from record files."""
    if report.filters.include_imported:
        return f"{plural(report.imported_games, 'imported game')} counted in"
    if report.imported_games_left_out:
        return f"{plural(report.imported_games_left_out, 'imported game')} left out ({how} counts them)"
    return "no imported game left out"


def filters_text(report: Report) -> str:
    """The filters the report applied, ``name=value`` each (``none`` without any)."""
    return ", ".join(f"{name}={value}" for name, value in report.filters.named_values() if value) or "none"


def text_lines(report: Report, max_players: int = 20) -> list[str]:
    """The report as plain text lines."""
    lines = [
        f"{plural(report.games, 'finished game')} under the {report.rules} rules, "
        f"{plural(report.decisions, 'decision')} "
        f"(filters: {filters_text(report)}; {imported_text(report)}); "
        f"95% intervals, normal approximation; none shown on n < {report.min_n}",
        "",
        "Agents against the people they sat with (a tie counts 1/2; difference = agent - person)",
    ]
    lines += entry_lines(
        report.agents_vs_people,
        "(no game with an agent)",
        lambda a: (
            f"{a.policy}: {plural(a.games, 'game')}, {plural(a.people, 'person', 'people')}; "
            f"win rate {figure(a.win_rate, percent=True)}; score difference {figure(a.score_difference, 1)}"
        ),
    )
    lines += ["", *people_lines(report, max_players), "", "Duplicate games, paired on the same dice (person - agent)"]
    lines += entry_lines(
        report.duplicate,
        "(no duplicate game)",
        lambda d: (
            f"vs {d.policy}: {plural(d.games, 'game')}, {plural(d.people, 'person', 'people')}; {figure(d.person_minus_agent, 2)}"
        ),
    )
    lines.append("")
    lines.append("Agents graded on the same games (expected points lost per decision)")
    lines += entry_lines(
        report.agents_graded,
        "(no agent decision)",
        lambda a: f"{a.policy}: {plural(a.games, 'game')}; all {figure(a.all)}; re-roll {figure(a.reroll)}; row {figure(a.row)}",
    )
    for section in (skill_lines(report, max_players), likeness_lines(report), rating_lines(report, max_players)):
        lines += ["", *section]
    return lines


def people_lines(report: Report, max_players: int = 20) -> list[str]:
    """The people's loss per decision: over people and pooled, by games played, its histogram, per person."""
    population = report.people.population
    people, games = plural(population.people, "person", "people"), plural(population.games, "game")
    lines = [f"People: expected points lost per decision ({people}, {games})"]
    for title, over_people, pooled in (
        ("all decisions", population.over_people.all, population.pooled.all),
        ("re-roll choices", population.over_people.reroll, population.pooled.reroll),
        ("row choices", population.over_people.row, population.pooled.row),
    ):
        lines.append(f"  {title}: over people {figure(over_people)}; pooled {figure(pooled)}")
    lines.append("  by games played before (mean of each game's loss per decision):")
    for b in report.people.by_games_played:
        lines.append(f"    game {b.games_played}: {figure(b.loss_per_decision)}")
    hist = report.people.histogram
    if hist.n:
        lines.append(f"  histogram of people's loss per decision (n={plural(hist.n, 'person', 'people')}):")
        for count, low, high in zip(hist.counts, hist.edges, hist.edges[1:]):
            lines.append(f"    {low:6.3f}-{high:6.3f} {count:5d} {'#' * int(round(40 * count / max(max(hist.counts), 1)))}")
    players = report.people.players
    lines.append(f"  per person ({len(players)}; first {min(len(players), max_players)} shown):")
    for p in players[:max_players]:
        lines.append(
            f"    {p.name}: {plural(p.games, 'game')}; all {figure(p.all)}; re-roll {figure(p.reroll)}; row {figure(p.row)}"
        )
    return lines


def entry_lines(entries, none: str, line) -> list[str]:
    """A section's lines, indented: ``line(entry)`` for each entry, or ``none`` when the section has none."""
    return [f"  {line(entry)}" for entry in entries] or [f"  {none}"]


def temperature(e: Estimate) -> str:
    """A fitted temperature with its interval (the interval's open end written as such)."""
    if e.mean is not None and e.low is not None and e.high is None:
        return f"{e.mean:.3f} [{e.low:.3f}, no upper end] (n={e.n})"
    return figure(e)


def skill_lines(report: Report, max_players: int = 20) -> list[str]:
    """Each person's temperature and the population's."""
    population = report.skill.population
    median = "-" if population.median is None else f"{population.median:.3f}"
    lines = [
        "Skill: the maximum-likelihood temperature T (points) of a softmax over Q* (0 = always the optimum; "
        "95% profile-likelihood intervals)",
        f"  {plural(population.people, 'person', 'people')}: median T {median}; pooled over decisions "
        f"{temperature(population.pooled)}; {population.no_finite_temperature} with no finite T",
        "  people per skill band: " + ", ".join(f"{b.band}: {b.people}" for b in population.bands),
    ]
    players = report.skill.players
    lines.append(f"  per person ({len(players)}; first {min(len(players), max_players)} shown):")
    for p in players[:max_players]:
        note = f"; {p.temperature.note}" if p.temperature.mean is None else ""
        lines.append(f"    {p.name}: T {temperature(p.temperature)}{note}; {p.band}")
    return lines


def likeness_lines(report: Report) -> list[str]:
    """Each policy's move-matching and log-likelihood on the people's decisions, overall and per skill band."""
    lines = [
        "Human-likeness: each policy on the people's decisions (top-1 agreement with the person's choice; "
        "mean log-likelihood of it, for policies that give probabilities)"
    ]
    for entry in report.likeness:
        if not isinstance(entry, PolicyLikeness):
            lines.append(f"  {entry.policy}: not measured ({entry.note})")
            continue
        text = f"  {entry.label()}: top-1 agreement {figure(entry.top1, percent=True)}"
        if entry.log_likelihood is not None:
            text += f"; mean log-likelihood {figure(entry.log_likelihood)}"
        lines.append(text)
        for band in entry.by_band:
            if band.people:
                likelihood = "" if band.log_likelihood is None else f"; {figure(band.log_likelihood)}"
                people = plural(band.people, "person", "people")
                lines.append(f"    {band.band} ({people}): {figure(band.top1, percent=True)}{likelihood}")
    return lines if report.likeness else [*lines, "  (no decision of a person)"]


def rated_modes(ratings: Ratings) -> str | None:
    """How many games of each mode the ratings were fitted to, and, where there are two, that they share one fit."""
    from yacht_play.report.ratings import POOLED

    if not ratings.games_by_mode:
        return None
    counts = ", ".join(f"{m.games} {m.mode}" for m in ratings.games_by_mode)
    return f"games rated: {counts}" + (f"; {POOLED}" if len(ratings.games_by_mode) > 1 else "")


def rating_lines(report: Report, max_players: int = 20) -> list[str]:
    """The rating of every person and agent, best first (every agent shown, and the first people)."""
    ratings = report.ratings
    anchor = ratings.anchor
    anchored = f"{anchor.policy} = {anchor.rating:g}" if anchor.policy else f"mean = {anchor.rating:g} (no greedy)"
    lines = [
        f"Ratings: Bradley-Terry on the Elo scale, {anchored}; 95% bootstrap intervals over games "
        f"({ratings.bootstrap} resamples; {plural(ratings.games, 'game')}, {plural(ratings.pairs, 'pairwise result')})",
        f"  ({WHY_BRADLEY_TERRY})",
    ]
    modes = rated_modes(ratings)
    if modes is not None:
        lines.append(f"  ({modes})")
    shown_people = 0
    for rank, p in enumerate(ratings.players, 1):
        if p.kind == "human":
            shown_people += 1
            if shown_people > max_players:
                continue
        kind = "agent" if p.kind == "agent" else "person"
        lines.append(f"  {rank}. {p.name} ({kind}): {figure(p.rating, 0)}")
    for a in ratings.agents_vs_people or ():
        lines.append(
            f"  {a.policy} against people: predicted score {a.predicted * 100:.1f}%, observed {a.observed * 100:.1f}% "
            f"(n={a.pairs})"
        )
    return lines
