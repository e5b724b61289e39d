"""Policies by name: the one list of policies, and the functions that build policies from it.

Names: ``random``, ``greedy``, ``optimal``, ``softmax:T`` (a softmax over the optimal Q-values at
temperature T points: human-like play of a chosen skill, :mod:`agents.policies.softmax`), ``target:T``
(maximizes P(final score >= T)), ``win``
(at a table of 2-5: maximizes its chance of finishing first), ``ppo:PATH`` for a trained model's
inference file (``.safetensors``, safe to load from anyone), ``plan:PATH`` for a planning agent's
learned sheet value (:mod:`agents.learned.plan`, a ``.safetensors`` file too), ``plan2:PATH`` for a two-player
planner's learned chance of winning (:mod:`agents.learned.plan2`, at a table of two), ``planN:PATH`` for a table
planner's learned shares of the win (:mod:`agents.learned.planN`, at tables of 2 to 5, any rules), ``dqn:PATH`` for a
masked DQN's Q network (:mod:`agents.learned.dqn`, greedy over the legal actions), or ``ppo-zip:PATH`` for a
stable-baselines3 zip (which runs code from the file when loaded: only for files you trust, and
only when typed by the user, never because a record or another file names it). A model plays
only the rule set it was trained on.

Each policy is one :class:`PolicySpec` in :data:`POLICIES`: its name (or the prefix of a pattern
such as ``target:T``), how it is built alone and at a table, the rule sets it plays, whether a
record may name it, its help line. Everything that accepts a policy name (``agents.evaluate``,
tournaments, training configs, ``YachtTable-v0`` opponents through :func:`make_opponents`,
``yacht play``, ``yacht serve``) resolves it here, behind the one guard of :mod:`agents.policies.guard` (a policy
that cannot choose is replaced by ``optimal`` for the rest of the game), so a new policy is one :func:`register` call::

    register(PolicySpec("first-legal", "the lowest legal action", lambda name, rules, encoding, seed: FirstLegal(rules)))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents.learned.dqn import PREFIX as DQN_PREFIX
from agents.learned.dqn import DQNPolicy, dqn_file_path, load_q_model
from agents.learned.model_files import check_model_rules, read_model_file
from agents.learned.plan import PREFIX as PLAN_PREFIX
from agents.learned.plan import PlanPolicy
from agents.learned.plan2 import PREFIX as PLAN2_PREFIX
from agents.learned.plan2 import plan2_rules
from agents.learned.plan2_files import SHIPPED_PLAN2
from agents.learned.plan_files import SHIPPED_PLANS, plan_file_path, read_plan_file
from agents.learned.planN import PREFIX as PLANN_PREFIX
from agents.learned.planN import planN_rules
from agents.learned.planN_files import SHIPPED_PLANN
from agents.learned.ppo import (
    PREFIX,
    SHIPPED_MODELS,
    ZIP_PREFIX,
    PPOPolicy,
    load_named_model,
    model_file_path,
    shipped_model_names,
)
from agents.learned.table_policy import model_policy
from agents.policies.guard import guard
from agents.policies.policy import GreedyPolicy, OptimalPolicy, Policy, RandomPolicy
from agents.policies.softmax import PREFIX as SOFTMAX_PREFIX
from agents.policies.softmax import SoftmaxPolicy, parse_softmax
from agents.policies.win import TargetPolicy, WinPolicy, parse_target
from yacht_env.echo import MAX_ECHO, echoed
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RULE_SETS, RuleSet

TARGET_PREFIX = "target:"

SolitaireBuilder = Callable[[str, RuleSet | None, str, int | None], Policy]  # (name, rules, encoding, seed)
TableBuilder = Callable[[str, int, RuleSet | None, int | None], Policy]  # (name, num_players, rules, seed)


def every_rule_set(name: str) -> list[str]:
    """Every rule set of ``RULE_SETS``: what a policy that reasons from the rules alone plays."""
    return list(RULE_SETS)


def rule_sets_without_sheet_state(name: str) -> list[str]:
    """The rule sets without bonuses or jokers: those the exact tables of ``win`` and ``target:T`` cover."""
    return [key for key, rules in RULE_SETS.items() if not rules.has_bonus_or_joker]


def plan_file_rules(name: str) -> list[str]:
    """The one rule set the plan file of ``plan:PATH`` was trained on (read and checked from the file)."""
    return [read_plan_file(plan_file_path(name[len(PLAN_PREFIX) :]))[0]["rules"]]


def plan2_file_rules(name: str) -> list[str]:
    """The one rule set the plan2 file of ``plan2:PATH`` was trained on (read and checked from the file)."""
    return [plan2_rules(name[len(PLAN2_PREFIX) :])]


def planN_file_rules(name: str) -> list[str]:
    """The one rule set the planN file of ``planN:PATH`` was trained on (read and checked from the file)."""
    return [planN_rules(name[len(PLANN_PREFIX) :])]


def model_file_rules(name: str) -> list[str]:
    """The one rule set the model file of ``ppo:PATH`` was trained on (read from the file, no weights loaded)."""
    return [read_model_file(model_file_path(name[len(PREFIX) :]))[0]["rules"]]


def dqn_file_rules(name: str) -> list[str]:
    """The one rule set the Q network file of ``dqn:PATH`` was trained on (read from the file, no weights loaded)."""
    return [read_model_file(dqn_file_path(name[len(DQN_PREFIX) :]))[0]["rules"]]


@dataclass(frozen=True)
class PolicySpec:
    """One policy of the table: everything the programs need to know about it.

    ``refusal`` is what a game under rules the policy does not play says; it is formatted with
    ``name`` (the policy's name, quoted and shortened as errors echo input), ``trained`` (the first rule set it
    plays), ``rules`` (the game's) and ``general`` (the policies that play every rule set).
    """

    name: str  # the exact name, or a pattern's prefix ending in ':' (target:, ppo:)
    help: str  # one line: what the policy does
    solitaire: SolitaireBuilder | None  # None: it plays only at a table
    table: TableBuilder | None = None  # None: it sits at a table as it plays alone
    argument: str = ""  # a pattern's argument as help writes it (T, PATH); "" for an exact name
    rule_sets: Callable[[str], list[str]] = every_rule_set  # the rule sets the policy of this name plays
    refusal: str = ""
    resumable: bool = False  # a record may name it and ``yacht play --resume`` rebuilds it (it loads no file)
    default: bool = False  # evaluated when no policy is named
    reads_totals: bool = False  # at a table it reads every seat's total, so it is built per table size
    table_sizes: tuple[int, int] = (1, MAX_PLAYERS)  # the fewest and most players of a table it sits at (1: alone)

    @property
    def help_name(self) -> str:
        """The name as help and messages write it: ``random``, ``target:T``, ``ppo:PATH``."""
        return self.name + self.argument

    def matches(self, name: str) -> bool:
        """Whether ``name`` names this policy (a pattern's argument must not be empty)."""
        if not self.argument:
            return name == self.name
        return name.startswith(self.name) and len(name) > len(self.name)

    @property
    def table_sizes_in_words(self) -> str:
        """The tables it sits at as messages say it: ``2`` or ``2 to 5`` (players)."""
        fewest, most = self.table_sizes
        return f"{fewest}" if fewest == most else f"{fewest} to {most}"

    @property
    def plays_alone(self) -> bool:
        """Whether the policy plays solitaire (``win`` plays only at a table)."""
        return self.solitaire is not None

    def check_plays_rules(self, name: str, rules: RuleSet) -> None:
        """``ValueError`` naming the policy ``name`` (of this spec) and both rule sets when it does not play ``rules``."""
        played = self.rule_sets(name)
        if rules.name not in played:
            general = ", ".join(s.name for s in POLICIES.values() if s.rule_sets is every_rule_set and not s.argument)
            raise ValueError(self.refusal.format(name=echoed(name), trained=played[0], rules=rules.name, general=general))

    def check_plays_at(self, name: str, num_players: int) -> None:
        """``ValueError`` naming the policy ``name`` (of this spec) and the table sizes it sits at when a table of
        ``num_players`` is not one. Only tables the game allows are checked (1 to ``MAX_PLAYERS``).
        """
        if not 1 <= num_players <= MAX_PLAYERS:
            return
        fewest, most = self.table_sizes
        if not fewest <= num_players <= most:
            sizes = self.table_sizes_in_words
            raise ValueError(f"agent {echoed(name)} plays at a table of {sizes} players; this table has {num_players}")

    def build(self, name: str, rules: RuleSet | None = None, encoding: str = "flat", seed: int | None = None) -> Policy:
        """The solitaire policy ``name`` (of this spec); ``ValueError`` for one that plays only at a table.

        Not guarded: :func:`make_policy` guards it, and the server guards each seat of each game.
        """
        if self.solitaire is None:
            example = name if len(name) <= MAX_ECHO and name.isprintable() else self.help_name
            raise ValueError(
                f"policy {echoed(name)} plays at a table of {self.table_sizes_in_words} players (it reads the opponents' "
                f"scores); play it at a table, e.g. python -m agents.evaluate --table {example},optimal"
            )
        return self.solitaire(name, rules, encoding, seed)

    def build_at_table(self, name: str, num_players: int, rules: RuleSet | None = None, seed: int | None = None) -> Policy:
        """The policy ``name`` (of this spec) for a seat at a table of ``num_players``: its table form, or the
        solitaire one for a policy that sits at a table as it plays alone. ``ValueError`` for a table it does not sit at.
        """
        self.check_plays_at(name, num_players)
        if self.table is None:
            return self.build(name, rules=rules, seed=seed)
        return self.table(name, num_players, rules, seed)


def _random(name, rules, encoding, seed):
    return RandomPolicy(rules, encoding, seed=seed)


def _greedy(name, rules, encoding, seed):
    return GreedyPolicy(rules, encoding)


def _optimal(name, rules, encoding, seed):
    return OptimalPolicy(rules, encoding)


def _softmax(name, rules, encoding, seed):
    return SoftmaxPolicy(parse_softmax(name), rules, encoding, seed=seed)


def _target(name, rules, encoding, seed):
    return TargetPolicy(parse_target(name, rules), rules)


def _target_at_table(name, num_players, rules, seed):
    return TargetPolicy(parse_target(name, rules), rules, num_players)


def _win_at_table(name, num_players, rules, seed):
    return WinPolicy(rules, num_players)


def _two_player_at_table(name, num_players, rules, seed):
    from agents.policies.exact2 import BEST_RESPONSE_PREFIX, TwoPlayerPolicy, parse_best_response

    opponent = parse_best_response(name) if name.startswith(BEST_RESPONSE_PREFIX) else None
    return TwoPlayerPolicy(rules, num_players, opponent)


def _plan(name, rules, encoding, seed):
    return PlanPolicy.load(name[len(PLAN_PREFIX) :], rules=rules, encoding=encoding)


def _plan2_at_table(name, num_players, rules, seed):
    from agents.learned.plan2 import Plan2Policy

    return Plan2Policy.load(name[len(PLAN2_PREFIX) :], rules=rules, num_players=num_players)


def _planN_at_table(name, num_players, rules, seed):
    from agents.learned.planN import PlanNPolicy

    return PlanNPolicy.load(name[len(PLANN_PREFIX) :], rules=rules, num_players=num_players)


def _dqn(name, rules, encoding, seed):
    return DQNPolicy.load_named(name, rules=rules, encoding=encoding)


def _dqn_at_table(name, num_players, rules, seed):
    """A Q network at a table: read as the table it was trained at, or as it plays alone."""
    model = load_q_model(name[len(DQN_PREFIX) :])
    check_model_rules(model, name, rules)  # before the table reads its observations under the wrong rules
    return model_policy(model, name, num_players, rules, solitaire=DQNPolicy)


def _model(name, rules, encoding, seed):
    return PPOPolicy.load_named(name, rules=rules, encoding=encoding)


def _model_at_table(name, num_players, rules, seed):
    """A model at a table: a table policy if it was trained at a table of ``num_players``, else solitaire."""
    model = load_named_model(name)
    check_model_rules(model, name, rules)  # before the table reads its observations under the wrong rules
    return model_policy(model, name, num_players, rules)


MODEL_REFUSAL = (
    "agent {name} is a model trained for the {trained} rules; this game plays {rules}: "
    "choose {general} or a model trained for {rules}"
)
EXACT_TABLES_REFUSAL = (
    "agent {name} plays rule sets without bonuses or jokers (its exact tables cover only those); "
    "this game plays {rules}: choose {general} or a ppo model"
)

# The order is the order of every list of names shown to people.
POLICIES: dict[str, PolicySpec] = {
    spec.name: spec
    for spec in (
        PolicySpec("random", "uniform over the legal actions", _random, resumable=True, default=True),
        PolicySpec("greedy", "maximizes this turn's expected score", _greedy, resumable=True, default=True),
        PolicySpec("optimal", "maximizes the expected final score (exact DP)", _optimal, resumable=True, default=True),
        PolicySpec(
            SOFTMAX_PREFIX,
            "a softmax over the optimal Q-values at temperature T points: human-like play (T=0 is optimal)",
            _softmax,
            argument="T",
        ),
        PolicySpec(
            TARGET_PREFIX,
            "maximizes P(final score >= T)",
            _target,
            _target_at_table,
            argument="T",
            rule_sets=rule_sets_without_sheet_state,
            refusal=EXACT_TABLES_REFUSAL,
            reads_totals=True,
        ),
        PolicySpec(
            "win",
            f"at a table of 2 to {MAX_PLAYERS}: maximizes its chance of finishing first",
            solitaire=None,
            table=_win_at_table,
            rule_sets=rule_sets_without_sheet_state,
            refusal=EXACT_TABLES_REFUSAL,
            reads_totals=True,
            table_sizes=(2, MAX_PLAYERS),
        ),
        PolicySpec(
            "exact2",
            "at a table of 2: plays the solved two-player game, the highest chance of winning when both play to win",
            solitaire=None,
            table=_two_player_at_table,
            rule_sets=rule_sets_without_sheet_state,
            refusal=EXACT_TABLES_REFUSAL,
            reads_totals=True,
            table_sizes=(2, 2),
        ),
        PolicySpec(
            "br:",
            "at a table of 2: the exact best response to OPPONENT (optimal or greedy), the most one can win against it",
            solitaire=None,
            table=_two_player_at_table,
            argument="OPPONENT",
            rule_sets=rule_sets_without_sheet_state,
            refusal=EXACT_TABLES_REFUSAL,
            reads_totals=True,
            table_sizes=(2, 2),
        ),
        PolicySpec(
            PREFIX,
            "a trained model's inference file (.safetensors), or a shipped model by name: ppo:yacht, ppo:yahtzee, ppo:yatzy",
            _model,
            _model_at_table,
            argument="PATH",
            rule_sets=model_file_rules,
            refusal=MODEL_REFUSAL,
        ),
        PolicySpec(
            DQN_PREFIX,
            "a masked DQN's Q network (.safetensors): the legal action of highest value",
            _dqn,
            _dqn_at_table,
            argument="PATH",
            rule_sets=dqn_file_rules,
            refusal=MODEL_REFUSAL,
        ),
        PolicySpec(
            PLAN_PREFIX,
            "plans each turn exactly under a learned sheet value (a plan file, or plan:yacht, plan:yahtzee, plan:yatzy)",
            _plan,
            argument="PATH",
            rule_sets=plan_file_rules,
            refusal=MODEL_REFUSAL,
        ),
        PolicySpec(
            PLAN2_PREFIX,
            "at a table of 2: plans each turn exactly under a chance of winning learned in self-play (a plan2 file, plan2:yacht)",
            solitaire=None,
            table=_plan2_at_table,
            argument="PATH",
            rule_sets=plan2_file_rules,
            refusal=MODEL_REFUSAL,
            reads_totals=True,
            table_sizes=(2, 2),
        ),
        PolicySpec(
            PLANN_PREFIX,
            f"at a table of 2 to {MAX_PLAYERS}, any rules: plans each turn exactly under every seat's chance of winning "
            "learned in self-play (a planN file, or a shipped one by name)",
            solitaire=None,
            table=_planN_at_table,
            argument="PATH",
            rule_sets=planN_file_rules,
            refusal=MODEL_REFUSAL,
            reads_totals=True,
            table_sizes=(2, MAX_PLAYERS),
        ),
        PolicySpec(
            ZIP_PREFIX,
            "a stable-baselines3 zip (runs code from the file: only files you trust)",
            _model,
            _model_at_table,
            argument="PATH",
        ),
    )
}


def register(spec: PolicySpec) -> PolicySpec:
    """Add ``spec`` to :data:`POLICIES`: from then on every program builds it by name. ``ValueError`` if taken."""
    if spec.name in POLICIES:
        raise ValueError(f"policy {spec.help_name!r} is registered already")
    POLICIES[spec.name] = spec
    return spec


def policy_specs() -> tuple[PolicySpec, ...]:
    """Every policy's spec, in table order."""
    return tuple(POLICIES.values())


def policy_names() -> tuple[str, ...]:
    """Every policy as messages name it, in table order: ``random``, ..., ``target:T``, ``ppo:PATH``, ..."""
    return tuple(spec.help_name for spec in POLICIES.values())


def model_prefixes() -> tuple[str, ...]:
    """The prefixes of the names that load a model file: ``ppo:``, ``dqn:``, ``plan:``, ``plan2:``, ``planN:``, ``ppo-zip:``."""
    files = (DQN_PREFIX, PLAN_PREFIX, PLAN2_PREFIX, PLANN_PREFIX)
    return tuple(spec.name for spec in POLICIES.values() if spec.table is _model_at_table or spec.name in files)


def shipped_policies() -> tuple[str, ...]:
    """The models the package ships, by name: ``ppo:yacht``, ``ppo:yahtzee``, ``ppo:yatzy``, ``plan:yacht``, ...,
    ``plan2:yacht``. Listing them reads no file; playing one needs :func:`can_read_model_files`.
    """
    folders = (
        (PREFIX, SHIPPED_MODELS),
        (PLAN_PREFIX, SHIPPED_PLANS),
        (PLAN2_PREFIX, SHIPPED_PLAN2),
        (PLANN_PREFIX, SHIPPED_PLANN),
    )
    return tuple(prefix + name for prefix, folder in folders for name in shipped_model_names(folder))


def can_read_model_files() -> bool:
    """Whether model files (``ppo:``, ``dqn:``, ``plan:``, ``plan2:``, ``planN:``) can be read here: torch and
    safetensors (the train extra).
    """
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def find_policy(name) -> PolicySpec | None:
    """The spec that ``name`` names, or None."""
    if not isinstance(name, str):
        return None
    return next((spec for spec in POLICIES.values() if spec.matches(name)), None)


def policy_spec(name) -> PolicySpec:
    """The spec that ``name`` names, else ``ValueError`` naming it and the allowed names (loads nothing)."""
    spec = find_policy(name)
    if spec is not None:
        return spec
    names = ", ".join(policy_names())
    if not isinstance(name, str):
        raise ValueError(f"policy name must be a string, got {echoed(name)}; expected one of {names}")
    raise ValueError(f"unknown policy {echoed(name)}; expected one of {names}")


def check_policy_name(name) -> str:
    """``name`` if it names a policy, else ``ValueError`` naming it and the allowed names (loads nothing)."""
    policy_spec(name)
    return name


def or_list(names) -> str:
    """``a, b or c``: names as a sentence lists them."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def solitaire_names(reading_totals: bool = True) -> tuple[str, ...]:
    """The policies that play alone, as help names them; without those that read their total (``target:T``),
    which need a table observation, when ``reading_totals`` is False.
    """
    return tuple(
        spec.help_name for spec in POLICIES.values() if spec.solitaire is not None and (reading_totals or not spec.reads_totals)
    )


def default_policies() -> list[str]:
    """The policies evaluated when none is named: ``random``, ``greedy``, ``optimal``."""
    return [spec.name for spec in POLICIES.values() if spec.default]


def resumable_policies() -> tuple[str, ...]:
    """The policies a record may name and ``yacht play --resume`` rebuilds: those that load no file."""
    return tuple(spec.name for spec in POLICIES.values() if spec.resumable)


def plays_alone(name: str) -> bool:
    """Whether the policy ``name`` plays solitaire (``win`` plays only at a table); True for a name that is no policy's."""
    spec = find_policy(name)
    return spec is None or spec.plays_alone


def reads_totals(name: str) -> bool:
    """Whether the policy ``name``, at a table, reads every seat's total (``win``, ``target:T``)."""
    spec = find_policy(name)
    return spec is not None and spec.reads_totals


def rule_sets_played(name: str) -> list[str]:
    """The names of the rule sets the policy ``name`` plays (a model's own, read from its file); ``ValueError`` if unknown."""
    return policy_spec(name).rule_sets(name)


def check_plays_rules(name, rules: RuleSet) -> None:
    """``ValueError`` naming the policy and both rule sets when ``name`` does not play ``rules``.

    Nothing for a name that is not a policy's: building it says what is wrong with it.
    """
    spec = find_policy(name)
    if spec is not None:
        spec.check_plays_rules(name, rules)


def make_policy(name: str, rules: RuleSet | None = None, encoding: str = "flat", seed: int | None = None) -> Policy:
    """Build the solitaire policy called ``name``: any of :func:`solitaire_names` (``random``, ``target:T``, ...),
    behind the guard (:mod:`agents.policies.guard`: a policy that cannot choose is replaced by ``optimal``, once told).
    """
    return guard(policy_spec(name).build(name, rules, encoding, seed))


def make_table_policy(name: str, num_players: int, rules: RuleSet | None = None, seed: int | None = None) -> Policy:
    """The policy called ``name`` for a seat at a table of ``num_players``.

    ``random``, ``greedy`` and ``optimal`` as :func:`make_policy` builds them; ``win``
    (:class:`agents.policies.win.WinPolicy`) and ``target:T`` read the table; ``ppo:PATH`` loads the model and
    plays it as a table policy if it was trained at a table of ``num_players``, as a solitaire policy
    if it was trained alone. Behind the guard, as :func:`make_policy` builds them.
    """
    return guard(policy_spec(name).build_at_table(name, num_players, rules, seed))


def make_opponents(names, rules: RuleSet | None = None, seed: int | None = None) -> list[Policy]:
    """Opponent policies for ``YachtTable-v0`` from names, for a table of ``len(names) + 1``.

    >>> gym.make("YachtTable-v0", opponents=make_opponents(["optimal", "greedy"]))
    """
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise ValueError(f"opponents must be a list of policy names, got {echoed(names)}")
    num_players = len(names) + 1
    return [make_table_policy(name, num_players, rules=rules, seed=seed) for name in names]


def __getattr__(attribute: str):
    # Read from the table when asked for, so that they include every policy registered since the import.
    if attribute == "POLICY_NAMES":
        return policy_names()
    if attribute == "MODEL_PREFIXES":
        return model_prefixes()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
