"""Training the two-player planner (``algorithm: plan2``): a chance of winning learned by self-play.

Each iteration plays ``plan.games_per_iteration`` games of the planner against itself under the current
network ``W`` (:mod:`agents.training.plan2_games`, with ``plan.epsilon`` random decisions), and keeps every
turn-start state those games visited with its one-turn backup ``(T W)(x)``: the mover's chance of winning
when this turn is played best under ``W``, exact through the dice probabilities. The network is then
fitted to the backups of a replay of the most recent ``plan.replay_states`` states (binary cross-entropy
on its logit; states the rules settle are left out, :func:`agents.learned.plan2.Settlement.settled`). That is fitted
value iteration on the agent's own games, as for the solitaire planner (:mod:`agents.training.plan_train`):
no exact solution enters the targets, the features, the initialisation or the choice of checkpoint (the
final model is the last one); the evaluations against ``env.opponents`` only measure.

The run folder is a planning run's: config.yaml, tb/, checkpoints/step_<games>.safetensors, learning_curve.csv
(steps = games; the win rate against the opponents and its interval), model.safetensors (the plan2 file,
:mod:`agents.learned.plan2_files`, played as ``plan2:PATH``) and eval.json (the final tournament).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from agents.evaluation.tournament import print_tournament, run_table, save_tournament_json
from agents.learned.plan2 import PREFIX, Plan2Policy, Settlement, WinValue, load_value, win_features
from agents.learned.plan2_files import num_features, write_plan2_file
from agents.registry import make_table_policy
from agents.training.config import PlanConfig, TrainConfig
from agents.training.plan2_games import SelfPlayer
from agents.training.plan_train import drive_run, game_seed, run_planning, run_progress, standing_figures
from agents.training.plan_values import fit_minibatches, follow_schedule, mlp, net_layers, net_tensors, restore_net
from yacht_env.rules import RuleSet, rule_set
from yacht_env.seeding import seat_seed


class WinNet:
    """The network of :class:`agents.learned.plan2.WinValue` as torch trains it, with its replay of (state, backup) pairs."""

    kind = "net2"

    def __init__(self, rules: RuleSet, plan: PlanConfig, seed: int = 0):
        import torch

        torch.manual_seed(seed)
        self.rules = rules
        self.player = SelfPlayer(rules)
        self.settlement = Settlement(rules)
        self.net = mlp(num_features(rules), plan.net_arch, 1)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=plan.learning_rate)
        self.learning_rates = (plan.learning_rate, plan.final_learning_rate or plan.learning_rate)
        self.epochs, self.batch_size, self.replay_size = plan.epochs, plan.batch_size, plan.replay_states
        self.rng = np.random.default_rng(seed)
        self.inputs = np.zeros((0, num_features(rules)), dtype=np.float32)
        self.targets = np.zeros(0, dtype=np.float32)

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The network's ``(weight, bias)`` pairs as numpy arrays (what a plan2 file holds)."""
        return net_layers(self.net)

    def value(self) -> WinValue:
        """The current ``W``, as the planner plays it."""
        return WinValue(self.rules, self.layers())

    def learn(self, movers, others, leads, backups, progress: float = 0.0) -> float:
        """Add the unsettled states and their backups to the replay and fit the network to it; returns the mean loss."""
        import torch

        follow_schedule(self.optimizer, self.learning_rates, progress)
        known, _ = self.settlement.settled(movers, others, leads)
        keep = np.flatnonzero(~known)
        new_inputs = win_features(self.rules.num_rows, movers[keep], others[keep], leads[keep])
        self.inputs = np.concatenate([new_inputs, self.inputs])[: self.replay_size]
        self.targets = np.concatenate([backups[keep].astype(np.float32), self.targets])[: self.replay_size]
        inputs, targets = torch.from_numpy(self.inputs), torch.from_numpy(self.targets)[:, None]
        bce = lambda batch: torch.nn.functional.binary_cross_entropy_with_logits(self.net(inputs[batch]), targets[batch])  # noqa: E731
        losses = fit_minibatches(self.optimizer, self.rng, len(targets), self.epochs, self.batch_size, bce)
        return float(np.mean(losses)) if losses else 0.0

    def tensors(self) -> dict:
        """What a checkpoint keeps of the model: the network's weights."""
        return net_tensors(self.net)

    def restore(self, tensors: dict) -> None:
        """Take back what :meth:`tensors` gave (the optimizer and the replay start afresh)."""
        restore_net(self.net, tensors)


def learn(model: WinNet, plan: PlanConfig, seed: int, games_done: int = 0, deadline=None, wall=None):
    """Iterate: self-play under the current ``W``, then fit. Yields ``(games_done, player one's share, loss)``."""
    while games_done < plan.total_games and (deadline is None or time.perf_counter() < deadline):
        count = min(plan.games_per_iteration, plan.total_games - games_done)
        played = model.player.play_games(model.value(), count, plan.epsilon, game_seed(seed, games_done))
        progress = run_progress(games_done, plan.total_games, deadline, wall)
        loss = model.learn(played.movers, played.others, played.leads, played.backups, progress)
        games_done += count
        yield games_done, float(played.first_player_shares.mean()), loss


def opponents_of(config: TrainConfig) -> list[str]:
    """The policy the evaluations seat against the planner: the config's opponent, or ``optimal``."""
    return list(config.env.opponents) or ["optimal"]


def tournament(value: WinValue, name: str, config: TrainConfig, games: int, grade: bool = False):
    """The planner against the opponent at a table of two, every deal in both seatings, on the evaluation seeds."""
    rules = value.rules
    opponent = opponents_of(config)[0]
    policies = [Plan2Policy(value, name), make_table_policy(opponent, 2, rules=rules, seed=seat_seed(config.run.eval_seed, 1))]
    return run_table(policies, [name, opponent], games, config.run.eval_seed, rules, grade=grade)


def periodic_figures(value: WinValue, config: TrainConfig) -> dict:
    """The planner's win rate (and its 95% interval) and mean score against the opponent on the evaluation games."""
    result, _ = tournament(value, "plan2", config, config.run.eval_games)
    return standing_figures(result.standings[[s.policy for s in result.standings].index("plan2")])


def run_plan2(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """train.py's two-player planning run: train (or resume), then the final tournament; a finished run is left alone."""
    run_planning(config, run_dir, resume, train_plan2, finish_plan2)


def train_plan2(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """Train the two-player planner of ``config`` in ``run_dir`` (from its last checkpoint if ``resume``), then evaluate it."""
    rules = rule_set(config.env.rules)
    model = WinNet(rules, config.plan, config.seed)

    def iterate(games_done, deadline, wall):
        played = learn(model, config.plan, config.seed, games_done, deadline, wall)
        return ((games, {"train/first_player_share": share, "train/loss": loss}) for games, share, loss in played)

    games_done = drive_run(config, run_dir, resume, model, iterate, lambda: periodic_figures(model.value(), config), "plan2")
    write_plan2_file(run_dir / "model.safetensors", model.layers(), rules, games_done)
    finish_plan2(config, run_dir)


def finish_plan2(config: TrainConfig, run_dir: Path) -> None:
    """The final tournament of the run's plan2 file against the opponent (eval.json), graded where a solution is computed."""
    path = run_dir / "model.safetensors"
    print(f"model: {path} (play it as {PREFIX}{path})")
    value = load_value(path)
    result, _ = tournament(value, f"{PREFIX}{path}", config, config.run.final_eval_games, grade=True)
    print_tournament(result)
    save_tournament_json(run_dir / "eval.json", result)
