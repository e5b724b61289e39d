"""What a training config will ask of the machine, estimated before anything is built: memory, and roughly time.

Every field of a config is bounded on its own (:mod:`agents.training.config`), but values inside those
bounds can still ask for more than a machine has: ``ppo.net_arch: [65536, 65536, 65536]`` is 8.6 billion
weights a network (137 GB with Adam's moments and the gradients), ``plan.games_per_iteration: 1e9`` is 89 GiB
of visited states, ``run.final_eval_games: 1e9`` a day of playing. :func:`check_budget` adds up the large
allocations each field causes (:func:`memory_needs`) and compares them with the memory available
(``MemAvailable`` of ``/proc/meminfo``), and the games and steps with rates no machine of this project's
kind beats (:func:`time_needs`, a lower bound of the time); what does not fit is a :class:`BudgetError`
naming the field, in one line. ``train.py --allow-large`` skips the check, for a machine that is bigger or
faster than these figures assume.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.training.config import ConfigError, TrainConfig
from yacht_env.rules import RULE_SETS

FLOAT = 4  # bytes of a float32: weights, observations, activations
INT64 = 8
# A weight of a network in training: itself, its gradient and Adam's two moments.
BYTES_PER_TRAINED_WEIGHT = 4 * FLOAT
READ_CHUNK = 65_536  # states per forward pass when a planning network's table is read (plan_values.NetValue)
SHARE_OF_AVAILABLE = 0.9  # what a run may plan to use of the memory available: the rest is Python, torch, numba

# Rates above any measured on this project's machines (docs/benchmarks.md: PPO trains 5,000-16,000 steps/s; a
# final evaluation of ppo:yacht with the reference policies, every decision graded, plays about 100 games/s on
# the 2-core reference machine; plan2:yacht learned from 200,000 games in 30 minutes), so the time estimated
# is a lower bound.
PPO_STEPS_PER_SECOND = 50_000
DQN_STEPS_PER_SECOND = 50_000  # a masked DQN steps no faster than PPO: the same envs, and a gradient step every few steps
EVAL_GAMES_PER_SECOND = 2_000
PLAN_GAMES_PER_SECOND = 20_000
PLAN2_GAMES_PER_SECOND = 5_000
MAX_HOURS = 72.0  # a run estimated (at the rates above) to take longer is refused: three days, at least

OVERRIDE = "pass --allow-large to start it anyway"


class BudgetError(ConfigError):
    """A config that asks for more memory or time than the machine has; one line naming the field."""


@dataclass(frozen=True)
class Need:
    """One large demand of a run: the config field that causes it, how much, and what for."""

    field: str
    amount: float  # bytes, or seconds
    what: str


def mlp_weights(inputs: int, widths: list[int], outputs: int) -> int:
    """The weights and biases of an MLP of ``inputs`` → ``widths`` → ``outputs``."""
    sizes = [inputs, *widths, outputs]
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))


def ppo_memory(config: TrainConfig) -> list[Need]:
    """The networks (policy and value, each the width of ``ppo.net_arch``), a minibatch's activations, the rollout buffer."""
    from agents.learned.model_files import flat_size, observation_space_of
    from yacht_env.actions import ActionLayout

    rules = RULE_SETS[config.env.rules]
    actions = ActionLayout(rules).num_actions
    inputs = flat_size(observation_space_of(config.env.observation_encoding, config.env.num_players, rules))
    inputs += actions if config.ppo.policy == "lookahead" else 0
    ppo = config.ppo
    weights = mlp_weights(inputs, ppo.net_arch, actions) + mlp_weights(inputs, ppo.net_arch, 1)
    # forward and backward values of every layer of both networks, for one minibatch
    activations = 2 * 2 * ppo.batch_size * (inputs + sum(ppo.net_arch)) * FLOAT
    samples = ppo.n_steps * config.env.num_envs
    per_sample = (inputs + actions + 8) * FLOAT  # observation, action mask, action, reward, value, advantage, ...
    return [
        Need("ppo.net_arch", weights * BYTES_PER_TRAINED_WEIGHT, f"{weights:,} weights in training"),
        Need("ppo.batch_size", activations, f"the activations of a minibatch of {ppo.batch_size:,}"),
        Need("ppo.n_steps", samples * per_sample, f"a rollout buffer of {samples:,} samples (n_steps x env.num_envs)"),
    ]


def dqn_memory(config: TrainConfig) -> list[Need]:
    """The Q network and its target, a minibatch's activations, and the replay buffer (each transition's observation and
    next observation, each with its legal actions: agents/training/dqn_env.py).
    """
    from agents.learned.model_files import flat_size, observation_space_of
    from yacht_env.actions import ActionLayout

    rules, dqn = RULE_SETS[config.env.rules], config.dqn
    actions = ActionLayout(rules).num_actions
    inputs = flat_size(observation_space_of(config.env.observation_encoding, 1, rules))
    weights = mlp_weights(inputs, dqn.net_arch, actions)
    # the online network's values, forward and backward, and the target network's forward pass
    activations = 3 * dqn.batch_size * (inputs + sum(dqn.net_arch) + actions) * FLOAT
    # observations and masks (int8), now and next; the action (int64), reward, done and timeout (float32)
    per_transition = 2 * (inputs * FLOAT + actions) + INT64 + 3 * FLOAT
    return [
        Need("dqn.net_arch", weights * (BYTES_PER_TRAINED_WEIGHT + FLOAT), f"{weights:,} weights in training, and a target"),
        Need("dqn.batch_size", activations, f"the activations of a minibatch of {dqn.batch_size:,}"),
        Need("dqn.buffer_size", dqn.buffer_size * per_transition, f"a replay buffer of {dqn.buffer_size:,} transitions"),
    ]


def plan_memory(config: TrainConfig) -> list[Need]:
    """The self-play games of an iteration, and the value network with its replay (or the table)."""
    from agents.training.plan_values import EXTRA_FEATURES, FEATURE_SETS

    rules, plan = RULE_SETS[config.env.rules], config.plan
    rows = rules.num_rows
    table = (1 << rows) * (rules.upper_cap + 1) * (2 if rules.tracks_yahtzee_box else 1)  # states of the value table
    games = plan.games_per_iteration
    needs = [Need("plan.games_per_iteration", 2 * games * (rows + 1) * INT64, f"{games:,} games' turn-start states")]
    if plan.value_model == "tabular" or (plan.value_model == "auto" and not rules.has_bonus_or_joker):
        return needs
    inputs = rows + EXTRA_FEATURES + FEATURE_SETS[plan.features]
    weights = mlp_weights(inputs, plan.net_arch, 1)
    reading = min(READ_CHUNK, table) * (inputs + sum(plan.net_arch)) * FLOAT
    needs += [
        Need("plan.net_arch", weights * BYTES_PER_TRAINED_WEIGHT + reading, f"{weights:,} weights in training"),
        Need("plan.replay_states", plan.replay_states * (3 * INT64 + inputs * FLOAT), f"a replay of {plan.replay_states:,}"),
    ]
    return needs


def plan2_memory(config: TrainConfig) -> list[Need]:
    """The self-play games of an iteration (every turn of every game kept, with its features) and the network."""
    from agents.learned.plan2_files import num_features

    rules, plan = RULE_SETS[config.env.rules], config.plan
    inputs, turns = num_features(rules), 2 * rules.num_rows
    games = plan.games_per_iteration
    weights = mlp_weights(inputs, plan.net_arch, 1)
    # a minibatch's inputs, and each layer's values before and after its activation, forward and backward
    activations = plan.batch_size * (inputs + 4 * sum(plan.net_arch)) * FLOAT
    # each turn's state and backup (4 arrays of int64), joined once more, and the features of the new states
    per_game = turns * (2 * 4 * INT64 + inputs * FLOAT)
    return [
        Need("plan.games_per_iteration", games * per_game, f"{games:,} games' {turns} turns each"),
        Need("plan.net_arch", weights * BYTES_PER_TRAINED_WEIGHT + activations, f"{weights:,} weights in training"),
        Need("plan.replay_states", plan.replay_states * (inputs + 1) * FLOAT * 2, f"a replay of {plan.replay_states:,}"),
    ]


def planN_memory(config: TrainConfig) -> list[Need]:
    """The self-play games of an iteration at its largest table (every seat's turns kept, with the table's features)
    and the network, whose outputs are one share of the win per seat.
    """
    from agents.learned.planN_files import num_features
    from yacht_env.game import MAX_PLAYERS

    rules, plan = RULE_SETS[config.env.rules], config.plan
    seats = max(plan.table_sizes)
    inputs, turns = num_features(rules), seats * rules.num_rows
    games = plan.games_per_iteration
    weights = mlp_weights(inputs, plan.net_arch, MAX_PLAYERS)
    activations = plan.batch_size * (inputs + 4 * (sum(plan.net_arch) + MAX_PLAYERS)) * FLOAT  # as plan2_memory's
    # each turn: every seat's sheet (open rows, subtotal, box, total) and share backed up, held per turn and joined once
    # more, and the table's features
    per_game = turns * (seats * 2 * 5 * INT64 + inputs * FLOAT)
    return [
        Need("plan.games_per_iteration", games * per_game, f"{games:,} games of {seats} seats, {turns} turns each"),
        Need("plan.net_arch", weights * BYTES_PER_TRAINED_WEIGHT + activations, f"{weights:,} weights in training"),
        # each replayed table's features and its seats' shares (float32), and its size (int64), joined once more
        Need(
            "plan.replay_states",
            plan.replay_states * ((inputs + MAX_PLAYERS) * FLOAT + INT64) * 2,
            f"a replay of {plan.replay_states:,}",
        ),
    ]


def memory_needs(config: TrainConfig) -> list[Need]:
    """The run's large allocations, by the field that causes each (bytes)."""
    needs = {"ppo": ppo_memory, "dqn": dqn_memory, "plan": plan_memory, "plan2": plan2_memory, "planN": planN_memory}
    return needs[config.algorithm](config)


def time_needs(config: TrainConfig) -> list[Need]:
    """Lower bounds of the run's time, by the field that causes each (seconds)."""
    run = config.run
    if config.algorithm == "ppo":
        budget, field, rate = config.ppo.total_timesteps, "ppo.total_timesteps", PPO_STEPS_PER_SECOND
        unit = "steps"
    elif config.algorithm == "dqn":
        budget, field, rate, unit = config.dqn.total_timesteps, "dqn.total_timesteps", DQN_STEPS_PER_SECOND, "steps"
    else:
        budget, field = config.plan.total_games, "plan.total_games"
        rate, unit = (PLAN_GAMES_PER_SECOND if config.algorithm == "plan" else PLAN2_GAMES_PER_SECOND), "games"
    evaluations = budget // run.eval_every
    return [
        Need(field, budget / rate, f"{budget:,} {unit} at {rate:,}/s at best"),
        Need("run.eval_games", evaluations * run.eval_games / EVAL_GAMES_PER_SECOND, f"{evaluations:,} evaluations"),
        Need("run.final_eval_games", run.final_eval_games / EVAL_GAMES_PER_SECOND, "the final evaluation"),
    ]


def available_memory(meminfo: str | Path = "/proc/meminfo") -> int | None:
    """The bytes of memory available to a new run (``MemAvailable``), or ``None`` where the system does not say."""
    try:
        for line in Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_budget(config: TrainConfig, available: int | None = None) -> None:
    """``BudgetError`` (one line, naming the field) if the run needs more memory than ``available`` (default: the
    machine's), or is estimated to take more than ``MAX_HOURS`` even at the fastest rates measured.
    """
    available = available_memory() if available is None else available
    needs = memory_needs(config)
    total = sum(need.amount for need in needs)
    if available is not None and total > SHARE_OF_AVAILABLE * available:
        worst = max(needs, key=lambda need: need.amount)
        raise BudgetError(
            f"{worst.field} asks for about {worst.amount / 2**30:,.1f} GiB ({worst.what}); the run needs "
            f"{total / 2**30:,.1f} GiB in all, this machine has {available / 2**30:,.1f} GiB available: "
            f"lower it, or {OVERRIDE}"
        )
    times = time_needs(config)
    seconds = sum(need.amount for need in times)
    if seconds > MAX_HOURS * 3600:
        worst = max(times, key=lambda need: need.amount)
        raise BudgetError(
            f"{worst.field} makes the run take at least {worst.amount / 3600:,.0f} hours ({worst.what}), "
            f"{seconds / 3600:,.0f} hours in all, beyond {MAX_HOURS:g}: lower it, or {OVERRIDE}"
        )
