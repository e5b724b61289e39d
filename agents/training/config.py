"""Training configs: typed, validated on load, overridable from the command line.

A config is a YAML file with the sections below; every key has a type and a default, and an
unknown key, a wrong type or a missing file is a ``ConfigError`` naming it, before any training.
Overrides use dotted keys: ``ppo.learning_rate=1e-4 env.num_envs=16`` (values parsed as YAML).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.registry import check_policy_name
from yacht_env.encoding import ENCODINGS


class ConfigError(ValueError):
    """A config file or override that cannot be used."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EnvConfig(Section):
    observation_encoding: str = "onehot"
    num_envs: int = Field(8, ge=1)
    vectorized: bool = False  # True: one YachtVectorEnv in-process; False: separate Yacht-v0 envs
    reward_scale: float = Field(0.01, gt=0)  # points are multiplied by this before PPO sees them
    illegal_action_penalty: float = 1.0
    # A table: the learner plays Yacht-v0 against `opponents` (policy names) and sees the table;
    # env i seats it in seat i % num_players, so it learns every seat a tournament gives it.
    num_players: int = Field(1, ge=1, le=5)
    opponents: list[str] = Field(default_factory=list)
    reward_mode: Literal["score", "win"] = "score"  # "win": +1 / -1 at the end (set reward_scale: 1)

    @field_validator("observation_encoding")
    @classmethod
    def known_encoding(cls, value):
        if value not in ENCODINGS:
            raise ValueError(f"unknown observation encoding {value!r}; expected one of {', '.join(ENCODINGS)}")
        return value

    @field_validator("opponents")
    @classmethod
    def known_policies(cls, names):
        for name in names:
            try:
                check_policy_name(name)
            except ValueError as error:
                raise ValueError(f"opponent: {error}") from None
        return names

    @model_validator(mode="after")
    def table_is_complete(self):
        if len(self.opponents) != self.num_players - 1:
            raise ValueError(
                f"num_players {self.num_players} needs {self.num_players - 1} opponent(s), got {len(self.opponents)}: {self.opponents}"
            )
        if self.reward_mode == "win" and self.num_players == 1:
            raise ValueError("reward_mode 'win' needs opponents (num_players >= 2): alone, every game is a win")
        if self.vectorized and self.num_players > 1:
            raise ValueError("the vectorized env plays solitaire only; set env.vectorized=false to train at a table")
        return self


class Schedule(Section):
    """A value annealed linearly from ``start`` to ``end`` over training."""

    start: float
    end: float


class PPOConfig(Section):
    total_timesteps: int = Field(200_000, ge=1)
    learning_rate: float | Schedule = 3e-4
    n_steps: int = Field(256, ge=1)
    batch_size: int = Field(512, ge=2)
    n_epochs: int = Field(4, ge=1)
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float | Schedule = 0.01
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    net_arch: list[int] = Field(default_factory=lambda: [256, 256])
    activation: Literal["tanh", "relu"] = "relu"
    # "mlp": logits from the observation alone. "lookahead": logits = MLP + one-turn look-ahead
    # q / lookahead_temperature (agents/training/lookahead_policy.py), so training starts from
    # softened greedy play and learns what greedy misses.
    policy: Literal["mlp", "lookahead"] = "mlp"
    lookahead_temperature: float = Field(0.3, gt=0)  # 0.3 beat 0.1, 0.5 and 1 (models/README.md)
    init_from: str | None = None  # a model.zip whose weights start this run (same observations and net)


class RunConfig(Section):
    checkpoint_every: int = Field(50_000, ge=1)
    eval_every: int = Field(50_000, ge=1)
    eval_games: int = Field(1_000, ge=2)
    final_eval_games: int = Field(10_000, ge=2)
    eval_seed: int = 1_000_000  # evaluation games never share seeds with training
    progress_bar: bool = True
    torch_threads: int = Field(1, ge=1)  # small MLPs gain little from more; 1 leaves a core for the envs


class TrainConfig(Section):
    name: str = "run"
    seed: int = 0
    env: EnvConfig = Field(default_factory=EnvConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    run: RunConfig = Field(default_factory=RunConfig)

    @model_validator(mode="after")
    def lookahead_sees_a_solitaire_box(self):
        if self.ppo.policy == "lookahead" and (self.env.observation_encoding == "dict" or self.env.num_players > 1):
            raise ValueError(
                "ppo.policy 'lookahead' reads the dice from a solitaire Box observation: "
                f"needs env.num_players 1 and a Box encoding, got {self.env.num_players} and {self.env.observation_encoding!r}"
            )
        return self


def _describe(error: ValidationError, source: str) -> str:
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        if item["type"] == "extra_forbidden":
            lines.append(f"unknown key {key!r}")
        else:
            lines.append(f"{key}: {item['msg']} (got {item.get('input')!r})")
    return f"invalid config {source}: " + "; ".join(lines)


def apply_override(data: dict, override: str) -> None:
    """Set ``a.b.c=value`` in a nested dict; the value is parsed as YAML (``1e-4``, ``[64, 64]``, ``true``)."""
    if "=" not in override:
        raise ConfigError(f"override {override!r} is not of the form key=value (e.g. ppo.learning_rate=1e-4)")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {override!r}: {part!r} is not a section")
    try:
        node[parts[-1]] = yaml.safe_load(raw)
    except yaml.YAMLError as error:
        raise ConfigError(f"override {override!r}: value is not valid YAML ({error})") from error


def load_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """Read, override and validate a config; raise ``ConfigError`` naming the bad key or path."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            raise ConfigError(f"config file {str(path)!r} is not valid YAML: {error}") from error
        if not isinstance(data, dict):
            raise ConfigError(f"config file {str(path)!r} must hold a mapping of sections, got {type(data).__name__}")
    for override in overrides:
        apply_override(data, override)
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_describe(error, repr(str(path)) if path else "(defaults)")) from None


def dump_config(config: TrainConfig) -> str:
    return yaml.safe_dump(config.model_dump(), sort_keys=False)
