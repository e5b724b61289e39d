"""Policies by name: the one list of names, and the functions that build policies from them.

Names: ``random``, ``greedy``, ``optimal``, ``target:T`` (maximizes P(final score >= T)), ``win``
(at a table of 2-5: maximizes its chance of finishing first), ``ppo:PATH`` for a trained model's
inference file (``.safetensors``, safe to load from anyone), or ``ppo-zip:PATH`` for a
stable-baselines3 zip (which runs code from the file when loaded: only for files you trust, and
only when typed by the user, never because a record or another file names it). A model plays
only the rule set it was trained on.
Everything that accepts a policy name (``agents.evaluate``, tournaments, training configs,
``YachtTable-v0`` opponents through :func:`make_opponents`, ``yacht play``) resolves it here.
"""

from __future__ import annotations

from agents.model_files import check_model_rules
from agents.policy import GreedyPolicy, OptimalPolicy, Policy, RandomPolicy
from agents.ppo import PPOPolicy, load_named_model
from agents.table_policy import model_policy
from agents.win import TargetPolicy, WinPolicy, parse_target
from yacht_env.rules import RuleSet

POLICY_NAMES = ("random", "greedy", "optimal", "target:T", "win", "ppo:PATH", "ppo-zip:PATH")
MODEL_PREFIXES = ("ppo:", "ppo-zip:")
TARGET_PREFIX = "target:"


def check_policy_name(name) -> str:
    """``name`` if it names a policy, else ``ValueError`` naming it and the allowed names (loads nothing)."""
    if not isinstance(name, str):
        raise ValueError(f"policy name must be a string, got {name!r}; expected one of {', '.join(POLICY_NAMES)}")
    if name in ("random", "greedy", "optimal", "win"):
        return name
    for prefix in (*MODEL_PREFIXES, TARGET_PREFIX):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name
    raise ValueError(f"unknown policy {name!r}; expected one of {', '.join(POLICY_NAMES)}")


def make_policy(name: str, rules: RuleSet | None = None, encoding: str = "flat", seed: int | None = None) -> Policy:
    """Build the solitaire policy called ``name``: ``random``, ``greedy``, ``optimal``, ``target:T`` or ``ppo:PATH``."""
    check_policy_name(name)
    if name == "random":
        return RandomPolicy(rules, encoding, seed=seed)
    if name == "greedy":
        return GreedyPolicy(rules, encoding)
    if name == "optimal":
        return OptimalPolicy(rules, encoding)
    if name.startswith(TARGET_PREFIX):
        return TargetPolicy(parse_target(name, rules), rules)
    if name == "win":
        raise ValueError(
            "policy 'win' plays at a table of 2 to 5 players (it reads the opponents' scores); "
            "play it at a table, e.g. python -m agents.evaluate --table win,optimal"
        )
    return PPOPolicy.load_named(name, rules=rules, encoding=encoding)


def make_table_policy(name: str, num_players: int, rules: RuleSet | None = None, seed: int | None = None) -> Policy:
    """The policy called ``name`` for a seat at a table of ``num_players``.

    ``random``, ``greedy`` and ``optimal`` as :func:`make_policy` builds them; ``win``
    (:class:`agents.win.WinPolicy`) and ``target:T`` read the table; ``ppo:PATH`` loads the model and
    plays it as a table policy if it was trained at a table of ``num_players``, as a solitaire policy
    if it was trained alone.
    """
    check_policy_name(name)
    if name == "win":
        return WinPolicy(rules, num_players)
    if name.startswith(TARGET_PREFIX):
        return TargetPolicy(parse_target(name, rules), rules, num_players)
    if name.startswith(MODEL_PREFIXES):
        model = load_named_model(name)
        check_model_rules(model, name, rules)  # before the table reads its observations under the wrong rules
        return model_policy(model, name, num_players, rules)
    return make_policy(name, rules=rules, seed=seed)


def make_opponents(names, rules: RuleSet | None = None, seed: int | None = None) -> list[Policy]:
    """Opponent policies for ``YachtTable-v0`` from names, for a table of ``len(names) + 1``.

    >>> gym.make("YachtTable-v0", opponents=make_opponents(["optimal", "greedy"]))
    """
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise ValueError(f"opponents must be a list of policy names, got {names!r}")
    num_players = len(names) + 1
    return [make_table_policy(name, num_players, rules=rules, seed=seed) for name in names]
