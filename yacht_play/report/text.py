"""The report's text for the people's skill, each policy's likeness to them and the ratings (:mod:`yacht_play.report.build`)."""

from __future__ import annotations

from yacht_play.report.estimates import figure, plural

WHY_BRADLEY_TERRY = (
    "Bradley-Terry rather than TrueSkill or OpenSkill: the games are a finished batch, so one order-free "
    "maximum-likelihood fit with intervals resampled over games"
)


def temperature(e: dict) -> str:
    """A fitted temperature with its interval (the interval's open end written as such)."""
    if e["mean"] is not None and e["low"] is not None and e["high"] is None:
        return f"{e['mean']:.3f} [{e['low']:.3f}, no upper end] (n={e['n']})"
    return figure(e)


def skill_lines(report: dict, max_players: int = 20) -> list[str]:
    """Each person's temperature and the population's."""
    skill = report["skill"]
    population = skill["population"]
    median = "-" if population["median"] is None else f"{population['median']:.3f}"
    lines = [
        "Skill: the maximum-likelihood temperature T (points) of a softmax over Q* (0 = always the optimum; "
        "95% profile-likelihood intervals)",
        f"  {plural(population['people'], 'person', 'people')}: median T {median}; pooled over decisions "
        f"{temperature(population['pooled'])}; {population['no_finite_temperature']} with no finite T",
        "  people per skill band: " + ", ".join(f"{b['band']}: {b['people']}" for b in population["bands"]),
    ]
    players = skill["players"]
    lines.append(f"  per person ({len(players)}; first {min(len(players), max_players)} shown):")
    for p in players[:max_players]:
        note = f"; {p['temperature']['note']}" if p["temperature"]["mean"] is None else ""
        lines.append(f"    {p['name']}: T {temperature(p['temperature'])}{note}; {p['band']}")
    return lines


def likeness_lines(report: dict) -> list[str]:
    """Each policy's move-matching and log-likelihood on the people's decisions, overall and per skill band."""
    lines = [
        "Human-likeness: each policy on the people's decisions (top-1 agreement with the person's choice; "
        "mean log-likelihood of it, for policies that give probabilities)"
    ]
    for entry in report["likeness"]:
        if "top1" not in entry:
            lines.append(f"  {entry['policy']}: not measured ({entry['note']})")
            continue
        name = entry["policy"] + (f" (T={entry['temperature']:.3g})" if "temperature" in entry else "")
        text = f"  {name}: top-1 agreement {figure(entry['top1'], percent=True)}"
        if entry["log_likelihood"] is not None:
            text += f"; mean log-likelihood {figure(entry['log_likelihood'])}"
        lines.append(text)
        for band in entry["by_band"]:
            if band["people"]:
                likelihood = "" if band["log_likelihood"] is None else f"; {figure(band['log_likelihood'])}"
                people = plural(band["people"], "person", "people")
                lines.append(f"    {band['band']} ({people}): {figure(band['top1'], percent=True)}{likelihood}")
    return lines if report["likeness"] else [*lines, "  (no decision of a person)"]


def rating_lines(report: dict, max_players: int = 20) -> list[str]:
    """The rating of every person and agent, best first (every agent shown, and the first people)."""
    ratings = report["ratings"]
    anchor = ratings["anchor"]
    anchored = f"{anchor['policy']} = {anchor['rating']:g}" if anchor["policy"] else f"mean = {anchor['rating']:g} (no greedy)"
    lines = [
        f"Ratings: Bradley-Terry on the Elo scale, {anchored}; 95% bootstrap intervals over games "
        f"({ratings['bootstrap']} resamples; {plural(ratings['games'], 'game')}, {plural(ratings['pairs'], 'pairwise result')})",
        f"  ({WHY_BRADLEY_TERRY})",
    ]
    shown_people = 0
    for rank, p in enumerate(ratings["players"], 1):
        if p["kind"] == "human":
            shown_people += 1
            if shown_people > max_players:
                continue
        kind = "agent" if p["kind"] == "agent" else "person"
        lines.append(f"  {rank}. {p['name']} ({kind}): {figure(p['rating'], 0)}")
    for a in ratings.get("agents_vs_people", []):
        lines.append(
            f"  {a['policy']} against people: predicted score {a['predicted'] * 100:.1f}%, observed {a['observed'] * 100:.1f}% "
            f"(n={a['pairs']})"
        )
    return lines or ["  (no game at a table)"]
