"""The planning agent's learned sheet value ``V(x)``: a table, or a small network over a feature vector.

``x = (S, u, y)`` is the sheet at the start of a turn (open rows ``S``, upper subtotal ``u`` capped at
the bonus threshold, ``y`` = 1 when the Yahtzee box holds its full points), flat-indexed as in
:mod:`agents.solvers.sheet_solver`. Both models learn by fitted value iteration on the states the agent's
own games visit (:mod:`agents.training.plan_train`): each is handed those states and gives back, in
``table()``, ``V`` of every state as the float64 array the planner reads. ``V`` of the full sheet
(no row open) is 0 by definition, never learned.

- :class:`TabularValue` (rule sets without a sheet state, Yacht's 4,096 open-row sets): each visited
  state takes its backup ``(T V)(x)`` directly, fewest open rows first.
- :class:`NetValue` (bonus rule sets, a million states): an MLP regresses the backups of the states
  of a replay of recent games, then is read out on every reachable state. Its inputs
  (:func:`features`): one 0/1 per row (open), ``u / threshold``, 1 when ``u`` reached the
  threshold, ``y``, and the share of rows still open; with ``feature_set="upper"`` also the upper
  rows' slack toward the bonus (:func:`upper_slack`); its output times ``VALUE_SCALE`` is ``V``.
"""

from __future__ import annotations

import numpy as np

from agents.solvers.sheet_solver import equivalent_states, reachable_states
from agents.training.plan_games import GamePlayer

VALUE_SCALE = 100.0  # points per unit of the network's output
EXTRA_FEATURES = 4  # after the rows: u / threshold, bonus reached, Yahtzee box full, share of rows open
FEATURE_SETS = {"basic": 0, "upper": 2}  # the features beyond EXTRA_FEATURES each set adds
PAR_SHARE = 0.6  # three dice of the row's face of five: the usual "par" of an upper row


def state_parts(shape: tuple[int, int, int], states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(open_bits, upper, yahtzee)`` of flat state indices into a value table of ``shape``."""
    _, num_upper, num_yahtzee = shape
    states = np.asarray(states, dtype=np.int64)
    return states // (num_upper * num_yahtzee), (states // num_yahtzee) % num_upper, states % num_yahtzee


def features(shape: tuple[int, int, int], num_rows: int, states: np.ndarray, upper_max: np.ndarray | None = None) -> np.ndarray:
    """The network's input of each flat state, (N, num_rows + EXTRA_FEATURES [+ 2]) float32 (see the module's docstring).

    With ``upper_max`` (each row's most points if it is an upper row, else 0) the two :func:`upper_slack` features follow.
    """
    open_bits, upper, yahtzee = state_parts(shape, states)
    rows = ((open_bits[:, None] >> np.arange(num_rows)) & 1).astype(np.float32)
    cap = max(shape[1] - 1, 1)
    extra = [upper / cap, (upper >= shape[1] - 1) & (shape[1] > 1), yahtzee, rows.sum(axis=1) / num_rows]
    if upper_max is not None:
        extra += upper_slack(rows, upper, cap, upper_max)
    return np.concatenate([rows, np.stack(extra, axis=1).astype(np.float32)], axis=1)


def upper_slack(rows: np.ndarray, upper: np.ndarray, cap: int, upper_max: np.ndarray) -> list[np.ndarray]:
    """How far the open upper rows exceed the points the bonus still needs, at par (three of the face) and at most.

    Both are over the threshold; the rows alone give them (each row's face), nothing learned or solved.
    """
    need = np.maximum(cap - upper, 0)
    most = rows @ upper_max.astype(np.float32)
    return [(PAR_SHARE * most - need) / cap, (most - need) / cap]


def upper_row_maxima(rules) -> np.ndarray:
    """Each row's most points if it is an upper row (counted toward the bonus), else 0: (C,) float."""
    upper = (int(rules.upper_bits) >> np.arange(rules.num_rows)) & 1
    return rules.hand_scores.max(axis=0).astype(np.float64) * upper


def follow_schedule(optimizer, rates: tuple[float, float], progress: float) -> None:
    """Set ``optimizer``'s learning rate to the point ``progress`` (0 to 1) of the way from ``rates[0]`` to ``rates[1]``."""
    first, final = rates
    for group in optimizer.param_groups:
        group["lr"] = first + (final - first) * min(max(progress, 0.0), 1.0)


def mlp(inputs: int, net_arch, outputs: int):
    """The planning agents' network: ReLU layers of ``net_arch`` widths from ``inputs`` to ``outputs`` logits."""
    import torch

    layers: list[torch.nn.Module] = []
    width = inputs
    for out in net_arch:
        layers += [torch.nn.Linear(width, out), torch.nn.ReLU()]
        width = out
    layers.append(torch.nn.Linear(width, outputs))
    return torch.nn.Sequential(*layers)


def fit_minibatches(optimizer, rng: np.random.Generator, count: int, epochs: int, batch_size: int, loss_of) -> list[float]:
    """``epochs`` passes over ``count`` examples in shuffled minibatches, one optimizer step on ``loss_of(batch)`` each;
    every minibatch's loss.
    """
    import torch

    losses = []
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(count))
        for start in range(0, len(order), batch_size):
            loss = loss_of(order[start : start + batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
    return losses


def net_layers(net) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(weight, bias)`` pairs of ``net``'s linear layers as numpy arrays (what a planning file holds)."""
    import torch

    linear = [module for module in net if isinstance(module, torch.nn.Linear)]
    return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linear]


def net_tensors(net) -> dict:
    """What a checkpoint keeps of a network: its weights, under ``net.``."""
    return {f"net.{key}": value.detach().clone().contiguous() for key, value in net.state_dict().items()}


def restore_net(net, tensors: dict) -> None:
    """Load into ``net`` what :func:`net_tensors` gave (an optimizer and a replay start afresh)."""
    net.load_state_dict({key.removeprefix("net."): value for key, value in tensors.items() if key.startswith("net.")})


class TabularValue:
    """``V`` as a table over every state, each visited state set to its one-turn backup (Gauss-Seidel)."""

    kind = "tabular"

    def __init__(self, player: GamePlayer):
        self.player = player
        self.values = np.zeros(player.shape)

    def learn(self, states: np.ndarray, progress: float = 0.0) -> float:
        """Back up the distinct ``states``, fewest open rows first; returns the mean absolute change (``progress`` unused)."""
        states = np.unique(states)
        states = states[np.argsort(self.player.open_counts(states), kind="stable")]
        before = self.values.reshape(-1)[states].copy()
        after = self.player.backups(self.values, states, in_place=True)
        return float(np.abs(after - before).mean())

    def sheet_values(self) -> np.ndarray:
        """``V`` of every state, (2**C, U, Y) float64 (a copy)."""
        return self.values.copy()

    def tensors(self) -> dict:
        """What a checkpoint keeps of the model."""
        import torch

        return {"values": torch.from_numpy(self.values.astype(np.float64))}

    def restore(self, tensors: dict) -> None:
        """Take back what :meth:`tensors` gave."""
        self.values = tensors["values"].numpy().astype(np.float64).reshape(self.player.shape).copy()


class NetValue:
    """``V`` as an MLP over :func:`features`, fitted to one-turn backups of a replay of visited states."""

    kind = "net"

    def __init__(
        self,
        player: GamePlayer,
        net_arch,
        learning_rate: float,
        epochs: int,
        batch_size: int,
        replay: int,
        seed: int,
        final_learning_rate: float | None = None,
        feature_set: str = "basic",
    ):
        import torch

        torch.manual_seed(seed)
        self.player = player
        self.num_rows = player.rules.num_rows
        self.upper_max = upper_row_maxima(player.rules) if feature_set == "upper" else None
        self.learning_rates = (learning_rate, learning_rate if final_learning_rate is None else final_learning_rate)
        self.net = mlp(self.num_rows + EXTRA_FEATURES + FEATURE_SETS[feature_set], net_arch, 1)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=learning_rate)
        self.epochs, self.batch_size, self.replay_size = epochs, batch_size, replay
        self.replay = np.zeros(0, dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        reachable = reachable_states(player.rules).reshape(-1)
        representative = equivalent_states(player.rules, reachable_states(player.rules)).reshape(-1)
        self.read_out = np.flatnonzero(reachable & (representative == np.arange(len(reachable))))
        self.copies = np.flatnonzero(reachable & (representative != np.arange(len(reachable))))
        self.copy_from = representative[self.copies]
        self.current = self._read_table()

    def learn(self, states: np.ndarray, progress: float = 0.0) -> float:
        """Add ``states`` to the replay, back up every replayed state under the current ``V`` and fit; returns the loss.

        ``progress`` (0 to 1, the share of the run done) sets the learning rate, linear from the first to the final one.
        """
        import torch

        follow_schedule(self.optimizer, self.learning_rates, progress)

        self.replay = np.unique(np.concatenate([np.unique(states), self.replay]))
        if len(self.replay) > self.replay_size:
            self.replay = self.rng.choice(self.replay, self.replay_size, replace=False)
        targets = self.player.backups(self.current, self.replay) / VALUE_SCALE
        inputs = torch.from_numpy(features(self.player.shape, self.num_rows, self.replay, self.upper_max))
        wanted = torch.from_numpy(targets.astype(np.float32))[:, None]
        mse = lambda batch: torch.nn.functional.mse_loss(self.net(inputs[batch]), wanted[batch])  # noqa: E731
        losses = fit_minibatches(self.optimizer, self.rng, len(self.replay), self.epochs, self.batch_size, mse)
        self.current = self._read_table()
        return float(np.mean(losses)) * VALUE_SCALE**2

    def _read_table(self) -> np.ndarray:
        """``V`` of every reachable state from the network (each subtotal that no longer matters read once); 0 elsewhere."""
        import torch

        values = np.zeros(int(np.prod(self.player.shape)))
        with torch.no_grad():
            for start in range(0, len(self.read_out), 65_536):
                chunk = self.read_out[start : start + 65_536]
                out = self.net(torch.from_numpy(features(self.player.shape, self.num_rows, chunk, self.upper_max)))[:, 0]
                values[chunk] = out.numpy().astype(np.float64) * VALUE_SCALE
        values[self.copies] = values[self.copy_from]
        table = values.reshape(self.player.shape)
        table[0] = 0.0  # the full sheet: nothing more to come
        return table

    def sheet_values(self) -> np.ndarray:
        """``V`` of every state, (2**C, U, Y) float64 (a copy)."""
        return self.current.copy()

    def tensors(self) -> dict:
        """What a checkpoint keeps of the model: the network's weights."""
        return net_tensors(self.net)

    def restore(self, tensors: dict) -> None:
        """Take back what :meth:`tensors` gave (the optimizer and the replay start afresh)."""
        restore_net(self.net, tensors)
        self.current = self._read_table()
