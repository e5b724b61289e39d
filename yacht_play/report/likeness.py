"""How much each policy plays like the people: on every stored decision of a person, offline, the policy's top-1
agreement with the person's choice (move-matching accuracy, :func:`agreement_and_likelihood`) and, for a policy that
gives probabilities (``ppo:``, ``softmax:T``, ``random``), the mean log-likelihood of the person's choice; overall and
by skill band (people grouped by their fitted temperature, :mod:`yacht_play.report.skill`). Each figure's 95% interval
counts each person once (:func:`yacht_play.report.estimates.estimate_over_people`): one person's decisions are not
independent of each other.

A choice is a row or a distinct multiset of dice kept (:mod:`agents.policies.softmax`): a policy that keeps the same dice
as the person by another action agrees with the person, and a policy's probability of the person's choice is the
sum over the actions that make it. The policy's top choices, which the person's must be among to agree:

- a policy that plays the best of its Q-values (``optimal``, ``greedy``, ``softmax:T``): its best choices, every
  choice tied with its best value within :data:`agents.solvers.exact_solution.TIE_RELATIVE`
  (:func:`agents.policies.softmax.best_choices`). Whichever of them it plays gives up nothing by its values, so a
  person who takes another agrees with it: ``optimal`` matches every decision of a person who always plays a best
  choice, however that person breaks ties;
- another policy that gives probabilities (``random``, ``ppo:``): its most probable choice; where ``k`` choices tie
  for it (within the same relative tolerance), each counts ``1/k``, the agreement of a tie-break drawn at random,
  rather than whichever the action layout lists first;
- any other: the choice of the action it plays.

A probability below ``FLOOR`` counts as ``FLOOR`` (a model's masked-out actions sit at about 1e-8), so that one
decision cannot sink a policy's mean to minus infinity.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from agents.policies.guard import unguarded
from agents.policies.policy import QPolicy
from agents.policies.softmax import best_choices, choice_actions
from agents.solvers.exact_solution import TIE_RELATIVE
from yacht_play.report.results import BandLikeness, Estimate, PolicyLikeness, PolicyNotMeasured

FLOOR = 1e-9
DEFAULT_POLICIES = ("random", "greedy", "optimal")
FIT = "softmax:fit"  # the softmax at the people's median fitted temperature


@dataclass
class Positions:
    """The people's decisions as a policy sees them: one entry per decision in each array."""

    q: np.ndarray  # (N, num_actions) Q*, -inf where illegal
    hands: np.ndarray
    rolls_left: np.ndarray
    open_bits: np.ndarray
    upper: np.ndarray
    yahtzee_full: np.ndarray
    actions: np.ndarray  # the people's
    players: int  # how many people made them
    people: np.ndarray | None = None  # who made each decision: intervals count each person once (else each decision)


def observations(policy, positions: Positions):
    """The positions in ``policy``'s observation encoding, and their legal-action masks."""
    encoded = policy.encoding.encode_batch(
        positions.hands, positions.rolls_left, positions.open_bits, positions.upper, positions.yahtzee_full
    )
    return encoded, np.isfinite(positions.q).astype(np.int8)


def agreement_and_likelihood(policy, positions: Positions, rules) -> tuple[np.ndarray, np.ndarray | None]:
    """Per decision: the policy's top-1 agreement with the person's choice (1, 0, or ``1/k`` where ``k`` most
    probable choices tie), and the log of its probability of that choice (None when the policy gives no
    probabilities). The module says what the policy's top choices are.
    """
    encoded, masks = observations(policy, positions)
    lowest = choice_actions(rules)[positions.hands]
    rows = np.arange(len(positions.actions))
    person = lowest[rows, positions.actions]
    probabilities = getattr(policy, "action_probabilities", None)
    given = probabilities(encoded, masks) if probabilities is not None else None  # None: the policy gives none
    log_p = of_choices = None
    if given is not None:
        p = np.asarray(given, dtype=float)
        of_choices = np.zeros_like(p)  # each choice's probability, on its lowest action
        np.add.at(of_choices, (np.repeat(rows, lowest.shape[1]), lowest.reshape(-1)), p.reshape(-1))
        log_p = np.log(np.maximum(of_choices[rows, person], FLOOR))
    measured = unguarded(policy)  # Q-values are read from the policy itself: a guard stands in for its actions only
    if isinstance(measured, QPolicy):
        return best_choices(measured.q_values(encoded, masks), positions.hands, rules)[rows, person].astype(float), log_p
    if of_choices is not None:
        top = of_choices >= of_choices.max(axis=1, keepdims=True) * (1.0 - TIE_RELATIVE)
        return top[rows, person] / top.sum(axis=1), log_p
    played = np.asarray(policy.act_batch(encoded, masks), dtype=np.int64)
    return (lowest[rows, played] == person).astype(float), None


def likeness_of(
    label: str, policy, positions: Positions, bands: np.ndarray, band_people: dict[str, int], rules
) -> PolicyLikeness:
    """One policy's figures: top-1 agreement and mean log-likelihood, overall and per skill band (``band_people``:
    each band's label and how many people it holds; ``bands``: the band of each decision's person).
    """
    from yacht_play.report.estimates import estimate, estimate_over_people

    agree, log_p = agreement_and_likelihood(policy, positions, rules)

    def figure_of(values: np.ndarray, mine: np.ndarray, people: int, clip) -> Estimate:
        if positions.people is None:
            return estimate(values[mine], "decisions", people, clip=clip)
        return estimate_over_people(values[mine], positions.people[mine], "decisions", clip=clip)

    def figures(mine: np.ndarray, people: int) -> tuple[Estimate, Estimate | None]:
        likelihood = None if log_p is None else figure_of(log_p, mine, people, (-math.inf, 0.0))
        return figure_of(agree, mine, people, (0.0, 1.0)), likelihood

    every = np.ones(len(agree), dtype=bool)
    by_band = tuple(BandLikeness(band, people, *figures(bands == band, people)) for band, people in band_people.items())
    return PolicyLikeness(label, len(agree), *figures(every, positions.players), by_band)


def build_policy(name: str, rules, median_t: float | None):
    """The policy ``name`` for solitaire positions under ``rules`` (``softmax:fit``: at ``median_t``), or a note why not."""
    from agents.policies.guard import guard
    from agents.policies.softmax import SoftmaxPolicy
    from agents.registry import check_plays_rules, make_policy, policy_spec

    if name == FIT:
        if median_t is None:
            return None, "no person with a finite fitted temperature"
        return guard(SoftmaxPolicy(median_t, rules, seed=0)), None
    try:
        spec = policy_spec(name)
        if spec.solitaire is None or spec.reads_totals:
            return None, "plays only at a table (it reads the other players' totals)"
        check_plays_rules(name, rules)
        return make_policy(name, rules=rules, seed=0), None
    except Exception as error:  # a model that cannot load: the report says why and goes on
        return None, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def likeness_table(
    names: list[tuple[str, str]], positions: Positions, bands: np.ndarray, band_people: dict[str, int], rules, median_t
) -> tuple[PolicyLikeness | PolicyNotMeasured, ...]:
    """Every policy of ``names`` (``(label, policy name)``) on the people's decisions; a policy that cannot play them
    is noted, with the reason, instead of measured: one that cannot be built, whose outputs are no probabilities, or
    that could not choose at a decision (the guard's fallback played there, so the figures would not be its own).
    """
    from agents.policies.policy import PolicyOutputError

    out: list[PolicyLikeness | PolicyNotMeasured] = []
    for label, name in names:
        policy, note = build_policy(name, rules, median_t)
        if policy is None:
            out.append(PolicyNotMeasured(label, len(positions.actions), note))
            continue
        try:
            entry = likeness_of(label, policy, positions, bands, band_people, rules)
        except PolicyOutputError as error:
            note = str(error)
        else:
            replaced = getattr(policy, "replaced", None)
            note = None if replaced is None else f"policy {name} could not choose at {replaced.reason}"
        if note is not None:  # named as the report names it (a server's label never shows its path)
            out.append(PolicyNotMeasured(label, len(positions.actions), note.replace(name, label)))
            continue
        out.append(dataclasses.replace(entry, temperature=median_t) if name == FIT else entry)
    return tuple(out)
