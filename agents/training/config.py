"""Training configs: typed, validated on load, overridable from the command line.

A config is a YAML file with the sections below; every key has a type and a default, and an
unknown key, a wrong type or a missing file is a ``ConfigError`` naming it, before any training.
Overrides use dotted keys: ``ppo.learning_rate=1e-4 env.num_envs=16`` (values parsed as YAML).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.registry import check_policy_name
from yacht_env.echo import MAX_ECHO, echoed
from yacht_env.encoding import ENCODINGS
from yacht_env.extras import needs_extra
from yacht_env.game import MAX_PLAYERS
from yacht_env.option_values import DECIMAL, DECIMAL_FORMS, WHOLE, WHOLE_FORMS
from yacht_env.rules import RULE_SETS

with needs_extra("train"):
    import yaml


class ConfigError(ValueError):
    """A config file or override that cannot be used."""


MAX_YAML_BYTES = 1_000_000  # a config is a page of text; a bigger file is refused before it is read
MAX_YAML_NODES = 100_000  # scalars, lists and mappings once aliases are expanded (a YAML alias bomb stops here)
MAX_YAML_DEPTH = 50  # lists in lists: PyYAML composes recursively
MAX_INT_DIGITS = 30  # no setting needs more; a 5,000-digit number would stall Python's int conversion
MAX_NAME = 100  # characters of a run name (a folder name; filesystems stop at 255 bytes)
MAX_LAYER_WIDTH = 65_536
MAX_LAYERS = 64
MAX_THREADS = 1_024
MAX_STEPS = 10**12  # total steps, checkpoint and evaluation intervals
MAX_ROLLOUT = 10**6  # ppo.n_steps and ppo.batch_size: the rollout buffer holds n_steps x num_envs samples
MAX_ENVS = 4_096
MAX_GAMES = 10**9
MAX_BUFFER = 10**8  # dqn.buffer_size: transitions the replay buffer holds (the budget check weighs the memory)


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis where it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shorten(value, limit: int = MAX_ECHO) -> str:
    """``value`` as an error message repeats it, at most ``limit`` characters of it (:func:`yacht_env.echo.echoed`)."""
    return echoed(value, limit)


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses deep nesting, long integers and documents that expand past ``MAX_YAML_NODES``.

    Aliases are counted as what they expand to, memoised per node, so an alias bomb is refused
    after composing its few hundred nodes, without building the expansion.
    """

    def __init__(self, stream):
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent, index):
        """Compose one node, refusing it past ``MAX_YAML_DEPTH`` levels."""
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise yaml.YAMLError(f"nested more than {MAX_YAML_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def compose_document(self):
        """Compose the document, then refuse it if it expands past ``MAX_YAML_NODES`` nodes."""
        node = super().compose_document()
        sizes: dict[int, int] = {}

        def expanded(item) -> int:
            if id(item) not in sizes:
                sizes[id(item)] = 0  # a recursive alias counts once: PyYAML builds a list holding itself, the types refuse it
                children = item.value if isinstance(item.value, list) else []
                parts = [part for child in children for part in (child if isinstance(child, tuple) else (child,))]
                total = 1
                for part in parts:
                    total += expanded(part)
                    if total > MAX_YAML_NODES:
                        break
                sizes[id(item)] = total
            return sizes[id(item)]

        if node is not None and expanded(node) > MAX_YAML_NODES:
            raise yaml.YAMLError(f"expands to more than {MAX_YAML_NODES:,} values (aliases counted as what they repeat)")
        return node

    def construct_yaml_int(self, node):
        """An integer of at most ``MAX_INT_DIGITS`` digits."""
        digits = sum(character.isdigit() for character in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise yaml.YAMLError(f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS})")
        return super().construct_yaml_int(node)


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
# YAML 1.1 reads 1e11 (no dot) as text; as a number, n_steps: 1e11 is refused by its bound, not as unparsable text
BoundedLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$"), list("-+0123456789"))


def parse_yaml(text: str):
    """``text`` read as YAML within the bounds of :class:`BoundedLoader`; ``yaml.YAMLError`` if it is not."""
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_yaml(path: str | Path, what: str = "config file"):
    """The YAML in the file at ``path``, at most ``MAX_YAML_BYTES``; ``ConfigError`` (one line, naming ``what``) if not."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{what} {str(path)!r} is a folder: give a YAML file, e.g. configs/quick.yaml")
    if not path.is_file():
        raise ConfigError(f"{what} {str(path)!r} does not exist")
    with path.open("rb") as handle:
        raw = handle.read(MAX_YAML_BYTES + 1)
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(f"{what} {str(path)!r} is larger than {MAX_YAML_BYTES:,} bytes: a config is a page of YAML")
    try:
        return parse_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {str(path)!r} is not a text file (expected YAML)") from None
    except yaml.YAMLError as error:
        detail = clip(" ".join(str(error).split()), 300)
        raise ConfigError(f"{what} {str(path)!r} is not valid YAML: {detail}") from None
    except ValueError as error:  # an explicit tag PyYAML cannot convert (!!int abc); MAX_YAML_DEPTH bounds recursion
        raise ConfigError(f"{what} {str(path)!r} is not valid YAML: {clip(str(error), 200)}") from None


SIGNED_DECIMAL = re.compile(rf"[+-]?(?:{DECIMAL.pattern})")
SIGNED_WHOLE = re.compile(rf"[+-]?{WHOLE.pattern}")
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=+-]*")  # = and +: sweep trials are named key=value


def number_or_schedule(value):
    """Before validation: a number or a ``{start, end}`` mapping, in one message instead of the union's two."""
    if isinstance(value, str) and SIGNED_DECIMAL.fullmatch(value):  # a number in quotes; float() also reads ١e-4
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
        raise ValueError(f"expected a number or a schedule {{start: ..., end: ...}}, got {shorten(value)}")
    return value


def one_of(value, allowed, what: str):
    """``value`` if it is in ``allowed``, else ``ValueError`` naming it (as ``what``) and the allowed ones."""
    if value not in allowed:
        raise ValueError(f"unknown {what} {shorten(value)}; expected one of {', '.join(allowed)}")
    return value


def number_forms(annotation) -> tuple[re.Pattern, str, str] | None:
    """The text forms a field of type ``annotation`` reads a number in (pattern, noun, forms), or None."""
    kinds = get_args(annotation) or (annotation,)
    if float in kinds:
        return SIGNED_DECIMAL, "a number", DECIMAL_FORMS
    if int in kinds:
        return SIGNED_WHOLE, "an integer", WHOLE_FORMS
    return None


def layer_widths(widths: list[int]) -> list[int]:
    """``widths`` if every layer width is from 1 to ``MAX_LAYER_WIDTH``, else ``ValueError`` naming them."""
    if any(width < 1 for width in widths):
        raise ValueError(f"layer widths must be >= 1, got {shorten(widths)}")
    if any(width > MAX_LAYER_WIDTH for width in widths):
        raise ValueError(f"layer widths must be at most {MAX_LAYER_WIDTH:,}, got {shorten(widths)}")
    return widths


# A network's hidden layers: 1 to MAX_LAYERS widths, each from 1 to MAX_LAYER_WIDTH (ppo, dqn and plan share it).
LayerWidths = Annotated[list[int], Field(min_length=1, max_length=MAX_LAYERS), AfterValidator(layer_widths)]


class Section(BaseModel):
    """A section of the config: unknown keys are refused and assignments validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*", mode="before")
    @classmethod
    def numbers_in_ascii(cls, value, info):
        """A number given as text (YAML reads ``1e-4`` as a string) in ASCII forms only, as every command line
        reads them (:mod:`yacht_env.option_values`): pydantic's lax parsing reads ``١e-4`` and `` 256 `` too.
        """
        forms = number_forms(cls.model_fields[info.field_name].annotation) if isinstance(value, str) else None
        if forms is not None and not forms[0].fullmatch(value):
            raise ValueError(f"expected {forms[1]} {forms[2]}, got {shorten(value)}")
        return value


class EnvConfig(Section):
    """The environment trained in: rule set, observation encoding, number of envs, players and opponents."""

    rules: str = "yacht"  # a name of yacht_env.rules.RULE_SETS: yacht, yahtzee, yatzy, ...
    observation_encoding: str = "onehot"
    num_envs: int = Field(8, ge=1, le=MAX_ENVS)
    vectorized: bool = False  # True: one YachtVectorEnv in-process; False: separate Yacht-v0 envs
    reward_scale: float = Field(0.01, gt=0)  # points are multiplied by this before PPO sees them
    illegal_action_penalty: float = Field(1.0, allow_inf_nan=False)
    # A table: the learner plays Yacht-v0 against `opponents` (policy names) and sees the table;
    # env i seats it in seat i % num_players, so it learns every seat a tournament gives it.
    num_players: int = Field(1, ge=1, le=MAX_PLAYERS)
    opponents: list[str] = Field(default_factory=list, max_length=MAX_PLAYERS)
    reward_mode: Literal["score", "win"] = "score"  # "win": +1 / -1 at the end (set reward_scale: 1)

    @field_validator("rules")
    @classmethod
    def known_rules(cls, value):
        """Check that the rule set is one of RULE_SETS."""
        return one_of(value, RULE_SETS, "rule set")

    @field_validator("observation_encoding")
    @classmethod
    def known_encoding(cls, value):
        """Check that the observation encoding is one of ENCODINGS."""
        return one_of(value, ENCODINGS, "observation encoding")

    @field_validator("opponents")
    @classmethod
    def known_policies(cls, names):
        """Check that every opponent names a known policy."""
        for name in names:
            try:
                check_policy_name(name)
            except ValueError as error:
                raise ValueError(f"opponent: {error}") from None
        return names

    @model_validator(mode="after")
    def table_is_complete(self):
        """Check that the opponents fill the table's other seats."""
        if len(self.opponents) != self.num_players - 1:
            raise ValueError(
                f"num_players {self.num_players} needs {self.num_players - 1} opponent(s), "
                f"got {len(self.opponents)}: {shorten(self.opponents)}"
            )
        if self.reward_mode == "win" and self.num_players == 1:
            raise ValueError("reward_mode 'win' needs opponents (num_players >= 2): alone, every game is a win")
        if self.vectorized and self.num_players > 1:
            raise ValueError("the vectorized env plays solitaire only; set env.vectorized=false to train at a table")
        return self


class Schedule(Section):
    """A value annealed linearly from ``start`` to ``end`` over training."""

    start: float = Field(allow_inf_nan=False, ge=0)
    end: float = Field(allow_inf_nan=False, ge=0)


class PPOConfig(Section):
    """The PPO hyperparameters and the policy network."""

    total_timesteps: int = Field(200_000, ge=1, le=MAX_STEPS)
    learning_rate: float | Schedule = 3e-4
    n_steps: int = Field(256, ge=1, le=MAX_ROLLOUT)
    batch_size: int = Field(512, ge=2, le=MAX_ROLLOUT)
    n_epochs: int = Field(4, ge=1, le=10_000)
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float | Schedule = 0.01
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    net_arch: LayerWidths = Field(default_factory=lambda: [256, 256])
    activation: Literal["tanh", "relu"] = "relu"
    # "mlp": logits from the observation alone. "lookahead": logits = MLP + one-turn look-ahead
    # q / lookahead_temperature (agents/training/lookahead_policy.py), so training starts from
    # softened greedy play and learns what greedy misses.
    policy: Literal["mlp", "lookahead"] = "mlp"
    lookahead_temperature: float = Field(0.3, gt=0)  # 0.3 beat 0.1, 0.5 and 1 (models/README.md)
    init_from: str | None = Field(None, max_length=4_096)  # a model.zip whose weights start this run (same observations and net)

    @field_validator("learning_rate", "ent_coef", mode="before")
    @classmethod
    def number_or_schedule(cls, value):
        """Read a number or a schedule."""
        return number_or_schedule(value)

    @field_validator("learning_rate")
    @classmethod
    def positive_learning_rate(cls, value):
        """Check that the learning rate (or its schedule's start) is finite and positive."""
        start = value.start if isinstance(value, Schedule) else value
        if not (math.isfinite(start) and start > 0):
            raise ValueError(f"the learning rate must be a finite number > 0, got {start!r}")
        return value

    @field_validator("ent_coef")
    @classmethod
    def non_negative_entropy(cls, value):
        """Check that the entropy coefficient (or both ends of its schedule) is finite and non-negative."""
        for part in (value.start, value.end) if isinstance(value, Schedule) else (value,):
            if not (math.isfinite(part) and part >= 0):
                raise ValueError(f"the entropy coefficient must be a finite number >= 0, got {part!r}")
        return value


class DQNConfig(Section):
    """The masked DQN's hyperparameters and its Q network (``algorithm: dqn``, agents/training/dqn_train.py).

    Steps are env steps (transitions), counted over all ``env.num_envs`` envs, as ``ppo.total_timesteps`` counts them.
    """

    total_timesteps: int = Field(200_000, ge=1, le=MAX_STEPS)
    learning_rate: float = Field(1e-4, gt=0, allow_inf_nan=False)
    buffer_size: int = Field(100_000, ge=1, le=MAX_BUFFER)  # transitions the replay buffer holds, the oldest replaced
    learning_starts: int = Field(10_000, ge=0, le=MAX_STEPS)  # steps of uniformly random legal play before learning
    batch_size: int = Field(256, ge=1, le=MAX_ROLLOUT)  # transitions of a gradient step
    gamma: float = Field(1.0, gt=0, le=1)  # 1: a game's points count the same whenever they are scored
    train_freq: int = Field(4, ge=1, le=MAX_ROLLOUT)  # env steps (of all envs at once) between training rounds
    gradient_steps: int = Field(1, ge=1, le=10_000)  # gradient steps of a training round
    target_update_interval: int = Field(10_000, ge=1, le=MAX_STEPS)  # steps between copies of the network to the target
    # the share of the run over which epsilon falls linearly from 1 to exploration_final_eps (0 would divide by 0)
    exploration_fraction: float = Field(0.1, gt=0, le=1)
    exploration_final_eps: float = Field(0.05, ge=0, le=1)
    net_arch: LayerWidths = Field(default_factory=lambda: [256, 256])
    activation: Literal["tanh", "relu"] = "relu"


class PlanConfig(Section):
    """The planning agent's training (``algorithm: plan``): fitted value iteration on its own games (see plan_train.py)."""

    total_games: int = Field(20_000, ge=1, le=MAX_GAMES)  # self-play games to learn from
    max_wall_minutes: float | None = Field(None, gt=0, allow_inf_nan=False)  # stop earlier, at this wall time
    games_per_iteration: int = Field(1_000, ge=1, le=MAX_GAMES)  # games played under one value, then learned from
    epsilon: float = Field(0.1, ge=0, le=1)  # chance of a random legal action at each decision of the self-play games
    # "tabular": one value per sheet state (only rule sets without a sheet state: Yacht's 4,096);
    # "net": an MLP over the sheet's features; "auto": tabular where it fits, else net.
    value_model: Literal["auto", "tabular", "net"] = "auto"
    net_arch: LayerWidths = Field(default_factory=lambda: [64, 64])
    learning_rate: float = Field(1e-3, gt=0, allow_inf_nan=False)
    # the rate at the run's end, reached linearly over its games or its max_wall_minutes (whichever ends it); None: constant
    final_learning_rate: float | None = Field(None, gt=0, allow_inf_nan=False)
    # the network's inputs: "basic" (rows, upper subtotal, bonus reached, Yahtzee box, share open); "upper" adds
    # the open upper rows' slack toward the bonus (agents/training/plan_values.py)
    features: Literal["basic", "upper"] = "basic"
    epochs: int = Field(2, ge=1, le=10_000)  # passes over the replay per iteration
    batch_size: int = Field(256, ge=1, le=MAX_ROLLOUT)
    replay_states: int = Field(100_000, ge=1, le=10**8)  # distinct visited states the network is fitted on
    # planN: the table sizes its self-play games are played at, one iteration each in turn (the sizes it plays)
    table_sizes: list[int] = Field(default_factory=lambda: list(range(2, MAX_PLAYERS + 1)), min_length=1, max_length=MAX_PLAYERS)
    # planN: a plan file (plan:yahtzee, plan:PATH) whose learned sheet value gives each seat's points to come: the
    # network reads each seat's expected lead, and its logits start from lead_weight times it (the weight is learned)
    lead_prior: str | None = Field(None, min_length=6, max_length=1000, pattern=r"^plan:\S")
    lead_weight: float = Field(1.0, ge=-100, le=100, allow_inf_nan=False)

    @field_validator("table_sizes")
    @classmethod
    def tables_of_two_or_more(cls, sizes):
        """Check that every table size is from 2 to MAX_PLAYERS, each named once."""
        if any(size < 2 or size > MAX_PLAYERS for size in sizes) or len(set(sizes)) != len(sizes):
            raise ValueError(f"table sizes must be distinct, each from 2 to {MAX_PLAYERS}, got {shorten(sizes)}")
        return sizes


class RunConfig(Section):
    """How often a run saves checkpoints and evaluates, and how it evaluates."""

    checkpoint_every: int = Field(50_000, ge=1, le=MAX_STEPS)
    eval_every: int = Field(50_000, ge=1, le=MAX_STEPS)
    eval_games: int = Field(1_000, ge=2, le=MAX_GAMES)
    final_eval_games: int = Field(10_000, ge=2, le=MAX_GAMES)
    eval_seed: int = Field(1_000_000, ge=0, lt=2**63)  # evaluation games never share seeds with training
    progress_bar: bool = True
    torch_threads: int = Field(1, ge=1, le=MAX_THREADS)  # small MLPs gain little from more; 1 leaves a core for the envs


class TrainConfig(Section):
    """A training run's whole config: its name, seed and sections."""

    name: str = "run"  # the run folder under the runs folder: a plain name, no path
    seed: int = Field(0, ge=0, lt=2**32)
    # plan: the planning agent; plan2: the two-player planner (a table of two); planN: the table planner (2 to 5
    # seats, any rules); their steps are self-play games. dqn: a DQN masked to the legal actions (alone or at a table)
    algorithm: Literal["ppo", "plan", "plan2", "planN", "dqn"] = "ppo"
    env: EnvConfig = Field(default_factory=EnvConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    dqn: DQNConfig = Field(default_factory=DQNConfig)
    plan: PlanConfig = Field(default_factory=PlanConfig)
    run: RunConfig = Field(default_factory=RunConfig)

    @field_validator("name")
    @classmethod
    def plain_name(cls, name):
        """Check that the run name is a plain folder name, with no path in it."""
        if len(name) > MAX_NAME:
            raise ValueError(f"a run name is at most {MAX_NAME} characters, got {len(name):,}: {shorten(name)}")
        if not RUN_NAME.fullmatch(name) or ".." in name:
            allowed = "letters, digits, '.', '_', '-', '=', '+'; no '/' or '..'"
            raise ValueError(f"a run name is a plain folder name ({allowed}), got {shorten(name)}")
        return name

    @model_validator(mode="after")
    def table_evaluations_fill_the_seats(self):
        """Check that the table evaluations name a policy for every seat of the table."""
        seats = self.env.num_players
        if seats > 1:
            for key in ("eval_games", "final_eval_games"):
                if getattr(self.run, key) < 2 * seats:
                    raise ValueError(
                        f"run.{key} must be at least {2 * seats} at a table of {seats} (two deals in every "
                        f"seating), got {getattr(self.run, key)}"
                    )
        return self

    @model_validator(mode="after")
    def plan_plays_alone(self):
        """Check that a planning run is solitaire, and that a tabular value is asked only where it fits."""
        if self.algorithm != "plan":
            return self
        if self.env.num_players != 1:
            raise ValueError(f"algorithm 'plan' trains a solitaire agent: needs env.num_players 1, got {self.env.num_players}")
        if self.plan.value_model == "tabular" and RULE_SETS[self.env.rules].has_bonus_or_joker:
            raise ValueError(
                f"plan.value_model 'tabular' fits rule sets without a sheet state; {self.env.rules!r} has bonuses: "
                "use 'net' or 'auto'"
            )
        return self

    @model_validator(mode="after")
    def plan2_plays_two(self):
        """Check that a two-player planning run is at a table of two, under rules whose rows score on their own."""
        if self.algorithm != "plan2":
            return self
        if self.env.num_players != 2:
            raise ValueError(
                f"algorithm 'plan2' trains a player for a table of two: needs env.num_players 2, got {self.env.num_players}"
            )
        if RULE_SETS[self.env.rules].has_bonus_or_joker:
            raise ValueError(
                f"algorithm 'plan2' plays rules whose rows score on their own (no bonus, no joker); "
                f"{self.env.rules!r} has a bonus or a joker: use yacht or yacht_exercism"
            )
        return self

    @model_validator(mode="after")
    def planN_evaluates_at_a_learned_size(self):
        """Check that a table planning run is evaluated at a table of one of the sizes it learns at."""
        if self.algorithm != "planN":
            return self
        if self.env.num_players not in self.plan.table_sizes:
            raise ValueError(
                f"algorithm 'planN' is evaluated at env.num_players, which must be one of plan.table_sizes "
                f"{shorten(self.plan.table_sizes)}, got {self.env.num_players}"
            )
        return self

    @model_validator(mode="after")
    def dqn_reads_a_box(self):
        """Check that a DQN run reads a Box observation (its file format's Q networks read one), alone or at a table."""
        if self.algorithm == "dqn" and self.env.observation_encoding == "dict":
            raise ValueError("algorithm 'dqn' trains on a Box observation: needs an encoding other than dict, got 'dict'")
        return self

    @model_validator(mode="after")
    def lookahead_sees_a_solitaire_box(self):
        """Check that the lookahead policy is used with a solitaire box observation (not dict, one player)."""
        if self.ppo.policy == "lookahead" and (self.env.observation_encoding == "dict" or self.env.num_players > 1):
            raise ValueError(
                "ppo.policy 'lookahead' reads the dice from a solitaire Box observation: "
                f"needs env.num_players 1 and a Box encoding, got {self.env.num_players} and {self.env.observation_encoding!r}"
            )
        return self


def describe_invalid(error: ValidationError, source: str, overrides: dict[str, str] | None = None) -> str:
    """One line for every problem; a key set on the command line is blamed on its override."""
    lines = []
    for item in error.errors():
        loc = [str(part) for part in item["loc"]]
        if ("float" in loc or "int" in loc) and isinstance(item.get("input"), dict):
            continue  # a schedule given: the number branch of the union says nothing useful
        key = ".".join(part for part in loc if part not in ("float", "int", "Schedule") and not part.startswith("function-"))
        message = clip(item["msg"].removeprefix("Value error, "), 400)
        origin = next(
            (
                f"override {shorten(text)}"
                for name, text in (overrides or {}).items()
                if key == name or key.startswith(name + ".")
            ),
            None,
        )
        if item["type"] == "extra_forbidden":
            text = f"unknown key {key!r}"
        elif not key:
            text = message
        else:
            text = f"{key}: {message}" + ("" if "got " in message else f" (got {shorten(item.get('input'))})")
        lines.append(f"{origin}: {text}" if origin else text)
    return f"invalid config {source}: " + "; ".join(dict.fromkeys(lines))


def apply_override(data: dict, override: str) -> None:
    """Set ``a.b.c=value`` in a nested dict; the value is parsed as YAML (``1e-4``, ``[64, 64]``, ``true``)."""
    if "=" not in override:
        raise ConfigError(f"override {shorten(override)} is not of the form key=value (e.g. ppo.learning_rate=1e-4)")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {shorten(override)}: {shorten(part)} is not a section")
    try:
        node[parts[-1]] = parse_yaml(raw)
    except (yaml.YAMLError, ValueError) as error:
        detail = clip(" ".join(str(error).split()), 300)
        raise ConfigError(f"override {shorten(override)}: value is not valid YAML ({detail})") from None


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> TrainConfig:
    """Read, override and validate a config; raise ``ConfigError`` naming the bad key or path."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        data = read_yaml(path)
        if data is None:
            raise ConfigError(f"config file {str(path)!r} is empty: it must hold the config's sections (see configs/quick.yaml)")
        if not isinstance(data, dict):
            raise ConfigError(f"config file {str(path)!r} must hold a mapping of sections, got {type(data).__name__}")
    named = {}
    for override in overrides:
        apply_override(data, override)
        named[override.split("=", 1)[0].strip()] = override
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(describe_invalid(error, repr(str(path)) if path else "(defaults)", named)) from None


def dump_config(config: TrainConfig) -> str:
    """The config as YAML text, in field order."""
    return yaml.safe_dump(config.model_dump(), sort_keys=False)
