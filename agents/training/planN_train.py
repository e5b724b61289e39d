"""Training the table planner (``algorithm: planN``): every seat's share of the win, learned by self-play at 2 to 5 seats.

Iteration ``k`` plays ``plan.games_per_iteration`` games of the planner against itself at a table of
``plan.table_sizes[k % len(table_sizes)]`` under the current network ``W`` (:mod:`agents.training.planN_games`, with
``plan.epsilon`` random decisions), and keeps every turn-start table those games visited with its one-turn backup
``(T W)(x)``: every seat's expected share of the win when the mover plays this turn best for itself under ``W``,
exact through the dice probabilities. The network is then fitted to the backups of a replay of the most recent
``plan.replay_states`` tables (cross-entropy of the softmax over the table's seats against the backed-up shares).
That is fitted value iteration on the agent's own games, as for the two-player planner
(:mod:`agents.training.plan2_train`): no exact solution enters the targets, the features, the initialisation or the
choice of checkpoint (the final model is the last one); the evaluations against ``env.opponents`` only measure.

One network serves every table size of a rule set: the size is an input, so what is learned at one size (how a
lead is worth more with fewer rows open, what a bonus still in reach is worth) carries to the others, and one
file ships per rule set.

The run folder is a planning run's: config.yaml, tb/, checkpoints/step_<games>.safetensors (written atomically;
``--resume`` continues from the last), learning_curve.csv (steps = games; the share of the win against the
opponents at ``env.num_players`` and its interval), model.safetensors (the planN file,
:mod:`agents.learned.planN_files`, played as ``planN:PATH``) and eval.json (the final tournament).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from agents.evaluation.tournament import print_tournament, run_table, save_tournament_json
from agents.learned.model_files import check_trained_rules
from agents.learned.plan import PREFIX as PLAN_PREFIX
from agents.learned.plan_files import plan_file_path, read_plan_file
from agents.learned.planN import PREFIX, PlanNPolicy, ShareValue, SheetFeatures, load_value, prior_lead_columns, table_features
from agents.learned.planN_files import LeadPrior, num_features, write_planN_file
from agents.registry import make_table_policy
from agents.training.config import PlanConfig, TrainConfig
from agents.training.plan_train import drive_run, game_seed, run_planning, run_progress, standing_figures
from agents.training.plan_values import fit_minibatches, follow_schedule, mlp, net_layers, net_tensors, restore_net
from agents.training.planN_games import SelfPlayer
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RuleSet, rule_set
from yacht_env.seeding import seat_seed


class ShareNet:
    """The network of :class:`agents.learned.planN.ShareValue` as torch trains it, with its replay of (table, backup) pairs."""

    kind = "netN"

    def __init__(self, rules: RuleSet, plan: PlanConfig, seed: int = 0):
        import torch

        torch.manual_seed(seed)
        self.rules = rules
        self.table_sizes = tuple(sorted(set(plan.table_sizes)))
        self.player = SelfPlayer(rules)
        self.points_to_come = None if plan.lead_prior is None else prior_points(plan.lead_prior, rules)
        self.net = mlp(num_features(rules, self.has_prior), plan.net_arch, MAX_PLAYERS)
        self.lead_weight = torch.nn.Parameter(torch.tensor(float(plan.lead_weight)))
        self.lead_columns = torch.from_numpy(prior_lead_columns(SheetFeatures(rules, self.points_to_come)))
        parameters = [*self.net.parameters(), *([self.lead_weight] if self.has_prior else [])]
        self.optimizer = torch.optim.Adam(parameters, lr=plan.learning_rate)
        self.learning_rates = (plan.learning_rate, plan.final_learning_rate or plan.learning_rate)
        self.epochs, self.batch_size, self.replay_size = plan.epochs, plan.batch_size, plan.replay_states
        self.rng = np.random.default_rng(seed)
        self.inputs = np.zeros((0, num_features(rules, self.has_prior)), dtype=np.float32)
        self.targets = np.zeros((0, MAX_PLAYERS), dtype=np.float32)
        self.seats = np.zeros(0, dtype=np.int64)

    @property
    def has_prior(self) -> bool:
        """Whether the network has a lead prior (``plan.lead_prior``)."""
        return self.points_to_come is not None

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The network's ``(weight, bias)`` pairs as numpy arrays (what a planN file holds)."""
        return net_layers(self.net)

    def prior(self) -> LeadPrior | None:
        """The lead prior as it stands (its weight is learned), or None without one."""
        return None if self.points_to_come is None else LeadPrior(self.points_to_come, float(self.lead_weight.detach()))

    def value(self) -> ShareValue:
        """The current ``W``, as the planner plays it."""
        return ShareValue(self.rules, self.layers(), self.table_sizes, self.prior())

    def logits(self, inputs):
        """The network's logits for a batch of inputs (torch), with the lead prior's term where it has one."""
        logits = self.net(inputs)
        return logits + self.lead_weight * inputs[:, self.lead_columns] if self.has_prior else logits

    def remember(self, played) -> None:
        """Add the visited tables and their backups to the front of the replay (the oldest fall off its end)."""
        n = played.tables.open_bits.shape[1]
        features = table_features(self.value().sheets, played.tables)
        targets = np.zeros((len(features), MAX_PLAYERS), dtype=np.float32)
        targets[:, :n] = played.backups
        self.inputs = np.concatenate([features, self.inputs])[: self.replay_size]
        self.targets = np.concatenate([targets, self.targets])[: self.replay_size]
        self.seats = np.concatenate([np.full(len(features), n), self.seats])[: self.replay_size]

    def learn(self, played, progress: float = 0.0) -> float:
        """Add the games' tables to the replay and fit the network to it; returns the mean loss."""
        import torch

        follow_schedule(self.optimizer, self.learning_rates, progress)
        self.remember(played)
        inputs, targets = torch.from_numpy(self.inputs), torch.from_numpy(self.targets)
        absent = torch.from_numpy(np.arange(MAX_PLAYERS)[None, :] >= self.seats[:, None])

        def cross_entropy(batch):  # over the seats of each table; the absent ones get no share
            logits = self.logits(inputs[batch]).masked_fill(absent[batch], -1e9)
            return -(targets[batch] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()

        losses = fit_minibatches(self.optimizer, self.rng, len(targets), self.epochs, self.batch_size, cross_entropy)
        return float(np.mean(losses)) if losses else 0.0

    def tensors(self) -> dict:
        """What a checkpoint keeps of the model: the network's weights (and the lead prior's weight)."""
        kept = net_tensors(self.net)
        if self.has_prior:
            kept["lead_weight"] = self.lead_weight.detach().clone().reshape(1)
        return kept

    def restore(self, tensors: dict) -> None:
        """Take back what :meth:`tensors` gave (the optimizer and the replay start afresh)."""
        import torch

        restore_net(self.net, tensors)
        if self.has_prior:
            weight = tensors["lead_weight"]
            if tuple(weight.shape) != (1,):
                raise ValueError(f"lead_weight has shape {tuple(weight.shape)}, expected (1,)")
            with torch.no_grad():
                self.lead_weight.copy_(weight.reshape(()))


def prior_points(name: str, rules: RuleSet) -> np.ndarray:
    """The points to come of the plan file ``name`` (``plan:yahtzee``, ``plan:PATH``), checked to be of ``rules``."""
    path = name.removeprefix(PLAN_PREFIX)
    meta, values = read_plan_file(plan_file_path(path))
    check_trained_rules("plan file", path, meta, rules)
    return values


def table_size_of(plan: PlanConfig, games_done: int) -> int:
    """The table size of the iteration that starts after ``games_done`` games: the sizes in turn, an iteration each."""
    sizes = sorted(set(plan.table_sizes))
    return sizes[(games_done // plan.games_per_iteration) % len(sizes)]


def learn(model: ShareNet, plan: PlanConfig, seed: int, games_done: int = 0, deadline=None, wall=None):
    """Iterate: self-play under the current ``W``, then fit. Yields ``(games_done, table size, first player's share, loss)``."""
    while games_done < plan.total_games and (deadline is None or time.perf_counter() < deadline):
        count = min(plan.games_per_iteration, plan.total_games - games_done)
        size = table_size_of(plan, games_done)
        played = model.player.play_games(model.value(), count, size, plan.epsilon, game_seed(seed, games_done))
        loss = model.learn(played, run_progress(games_done, plan.total_games, deadline, wall))
        games_done += count
        yield games_done, size, float(played.first_player_shares.mean()), loss


def tournament(value: ShareValue, name: str, config: TrainConfig, games: int):
    """The planner in seat one against the opponents, every deal in every seating, on the evaluation seeds."""
    rules, n = value.rules, config.env.num_players
    opponents = list(config.env.opponents)
    seated = [make_table_policy(o, n, rules=rules, seed=seat_seed(config.run.eval_seed, i + 1)) for i, o in enumerate(opponents)]
    return run_table([PlanNPolicy(value, name, n), *seated], [name, *opponents], games, config.run.eval_seed, rules)


def periodic_figures(value: ShareValue, config: TrainConfig) -> dict:
    """The planner's share of the win (and its 95% interval) and mean score against the opponents on the evaluation games."""
    result, _ = tournament(value, "planN", config, config.run.eval_games)
    return standing_figures(result.standings[[s.policy for s in result.standings].index("planN")])


def run_planN(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """train.py's table planning run: train (or resume), then the final tournament; a finished run is left alone."""
    run_planning(config, run_dir, resume, train_planN, finish_planN)


def train_planN(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """Train the table planner of ``config`` in ``run_dir`` (from its last checkpoint if ``resume``), then evaluate it."""
    rules = rule_set(config.env.rules)
    model = ShareNet(rules, config.plan, config.seed)

    def iterate(games_done, deadline, wall):
        played = learn(model, config.plan, config.seed, games_done, deadline, wall)
        return ((games, {f"train/first_player_share_{size}": share, "train/loss": loss}) for games, size, share, loss in played)

    games_done = drive_run(config, run_dir, resume, model, iterate, lambda: periodic_figures(model.value(), config), "planN")
    write_planN_file(run_dir / "model.safetensors", model.layers(), rules, model.table_sizes, games_done, model.prior())
    finish_planN(config, run_dir)


def finish_planN(config: TrainConfig, run_dir: Path) -> None:
    """The final tournament of the run's planN file against the opponents (eval.json)."""
    path = run_dir / "model.safetensors"
    print(f"model: {path} (play it as {PREFIX}{path})")
    result, _ = tournament(load_value(path, config.env.num_players), f"{PREFIX}{path}", config, config.run.final_eval_games)
    print_tournament(result)
    save_tournament_json(run_dir / "eval.json", result)
