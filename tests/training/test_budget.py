"""A config inside every field's bounds can still ask for more than the machine has: train.py estimates its memory
and its time first (agents.training.budget) and refuses, in one line naming the field, what cannot fit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from agents.training.budget import (
    MAX_HOURS,
    BudgetError,
    available_memory,
    check_budget,
    memory_needs,
    mlp_weights,
    time_needs,
)
from agents.training.config import load_config
from train import main as train_main
from yacht_env.rules import RULE_SETS

ROOT = Path(__file__).resolve().parents[2]
GiB = 2**30
MACHINE = 16 * GiB  # the memory available these tests assume: a laptop's
PLAN = ["algorithm=plan", "plan.value_model=net"]
PLAN2 = ["algorithm=plan2", "env.num_players=2", "env.opponents=[optimal]"]
WIDE = "plan.net_arch=[65536,65536,65536]"


@given(inputs=st.integers(1, 200), widths=st.lists(st.integers(1, 300), min_size=1, max_size=4), outputs=st.integers(1, 50))
def test_the_weights_counted_are_those_torch_builds(inputs, widths, outputs):
    sizes = [inputs, *widths, outputs]
    layers = [torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]
    assert mlp_weights(inputs, widths, outputs) == sum(p.numel() for layer in layers for p in layer.parameters())


@pytest.mark.parametrize(
    "overrides, field",
    [
        (["ppo.net_arch=[65536,65536,65536]"], "ppo.net_arch"),
        ([*PLAN, WIDE], "plan.net_arch"),
        ([*PLAN2, WIDE], "plan.net_arch"),
        (["algorithm=plan", "plan.games_per_iteration=1e9"], "plan.games_per_iteration"),
        ([*PLAN2, "plan.games_per_iteration=1e9"], "plan.games_per_iteration"),
        (["ppo.n_steps=1000000", "env.num_envs=4096"], "ppo.n_steps"),
    ],
)
def test_a_config_that_cannot_fit_in_memory_is_refused_in_one_line_naming_the_field(overrides, field):
    config = load_config(None, overrides)
    with pytest.raises(BudgetError) as refused:
        check_budget(config, available=MACHINE)
    message = str(refused.value)
    assert message.startswith(f"{field} asks for about ") and "\n" not in message
    assert "this machine has 16.0 GiB available" in message and message.endswith("pass --allow-large to start it anyway")


def test_the_games_of_an_iteration_are_counted_from_what_they_allocate():
    """plan: every game's turn-start states, (games, rows) int64, and as much again for the backups and the replay."""
    config = load_config(None, ["algorithm=plan", "plan.games_per_iteration=1e9"])
    (games,) = [need for need in memory_needs(config) if need.field == "plan.games_per_iteration"]
    assert games.amount == 2 * 10**9 * (12 + 1) * 8  # Yacht's 12 rows and the score


@pytest.mark.parametrize(
    "overrides, field",
    [
        (["run.final_eval_games=1e9"], "run.final_eval_games"),
        (["ppo.total_timesteps=1e12"], "ppo.total_timesteps"),
        (["algorithm=dqn", "dqn.total_timesteps=1e12"], "dqn.total_timesteps"),
        (["run.eval_every=1000", "run.eval_games=1e6", "ppo.total_timesteps=1e6"], "run.eval_games"),
        (["algorithm=plan", "run.eval_every=1", "plan.total_games=1e6"], "run.eval_games"),
    ],
)
def test_a_run_that_would_take_days_is_refused_naming_the_field(overrides, field):
    config = load_config(None, overrides)
    assert sum(need.amount for need in time_needs(config)) > MAX_HOURS * 3600
    with pytest.raises(BudgetError, match=f"^{field} makes the run take at least [0-9,]+ hours") as refused:
        check_budget(config, available=MACHINE)
    message = str(refused.value)
    assert "\n" not in message
    # the hours named are the largest need's and the sum's, to the nearest hour
    worst, in_all = re.search(r"at least ([0-9,]+) hours .*, ([0-9,]+) hours in all", message).groups()
    seconds = [need.amount for need in time_needs(config)]
    assert (number(worst), number(in_all)) == (round(max(seconds) / 3600), round(sum(seconds) / 3600))


def number(text: str) -> float:
    return float(text.replace(",", ""))


def test_the_memory_named_is_the_largest_need_and_the_sum_in_gib():
    config = load_config(None, [*PLAN2, "plan.games_per_iteration=3e6", "plan.replay_states=1e8"])
    with pytest.raises(BudgetError) as refused:
        check_budget(config, available=MACHINE)
    amounts = [need.amount for need in memory_needs(config)]
    found = re.search(r"about ([0-9.,]+) GiB .* needs ([0-9.,]+) GiB in all", str(refused.value)).groups()
    assert [number(text) for text in found] == [round(max(amounts) / GiB, 1), round(sum(amounts) / GiB, 1)]


@pytest.mark.parametrize("algorithm", ["plan2", "planN"])
def test_games_of_two_player_and_table_planners_are_timed_at_their_own_slower_rate(algorithm):
    from agents.training.budget import PLAN2_GAMES_PER_SECOND, PLAN_GAMES_PER_SECOND

    games = ["plan.total_games=1e6"]
    solitaire = time_needs(load_config(None, ["algorithm=plan", *games]))[0]
    table = time_needs(load_config(None, [f"algorithm={algorithm}", *PLAN2[1:], *games]))[0]
    assert (solitaire.field, table.field) == ("plan.total_games", "plan.total_games")
    assert (solitaire.amount, table.amount) == (1e6 / PLAN_GAMES_PER_SECOND, 1e6 / PLAN2_GAMES_PER_SECOND)


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda path: path.stem)
def test_every_shipped_config_fits_a_small_machine(path):
    if path.stem.startswith("sweep"):
        pytest.skip("a sweep file, not a run's config")
    config = load_config(path)
    assert sum(need.amount for need in memory_needs(config)) < 1 * GiB
    check_budget(config, available=2 * GiB)


def test_the_memory_available_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemFree:         1000 kB\nMemAvailable:   20971520 kB\n")
    assert available_memory(meminfo) == 20 * GiB
    meminfo.write_text("MemTotal:       32000000 kB\n")
    assert available_memory(meminfo) is None
    assert available_memory(tmp_path / "absent") is None


def test_train_py_refuses_before_writing_anything_and_allow_large_skips_the_check(tmp_path):
    table = ["--config", str(ROOT / "configs" / "win_vs_optimal.yaml"), "--runs-dir", str(tmp_path), "ppo.init_from=null"]
    wide = [*table, "ppo.net_arch=[65536,65536,65536]", "env.opponents=[ppo-zip:missing.zip]"]
    with pytest.raises(SystemExit) as refused:
        train_main(wide)
    assert str(refused.value).startswith("error: ppo.net_arch asks for about ") and "\n" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []
    # past the budget, the run starts: its envs are built first, and the missing opponent stops it before the network
    with pytest.raises(SystemExit, match="no model file at 'missing.zip'"):
        train_main([*wide, "--allow-large"])


# -- each estimate against what training really allocates ------------------------------------------------------------


def trained_bytes(parameters, optimizer) -> int:
    """The bytes an optimizer step leaves for ``parameters``: each weight, its gradient and the optimizer's state of it
    (Adam's two moments; its step counters, one number a tensor, left out)."""
    parameters = list(parameters)
    for parameter in parameters:
        parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    tensors = [*parameters, *(p.grad for p in parameters)]
    tensors += [value for p in parameters for value in optimizer.state[p].values() if value.dim() > 0]
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def kept_for_backward(run, parameters) -> int:
    """The bytes of the activations autograd keeps for the backward pass of ``run()`` (each storage once; the weights,
    counted apart, left out)."""
    kept = {}

    def pack(tensor):
        kept[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        run()
    weights = {parameter.untyped_storage().data_ptr() for parameter in parameters}
    return sum(size for storage, size in kept.items() if storage not in weights)


def needs_of(config) -> dict[str, float]:
    return {need.field: need.amount for need in memory_needs(config)}


def ppo_model(config, tmp_path):
    from agents.training.envs import make_training_env
    from train import new_model

    return new_model(config, make_training_env(config.env, seed=0), tmp_path)


@pytest.mark.parametrize("policy", ["mlp", "lookahead"])
def test_ppo_estimates_are_what_its_policy_and_rollout_buffer_allocate(policy, tmp_path):
    import numpy as np

    config = load_config(None, [f"ppo.policy={policy}", "ppo.net_arch=[96,64]", "ppo.batch_size=128", "ppo.n_steps=32"])
    model, needs = ppo_model(config, tmp_path), needs_of(config)
    policy_net = model.policy
    assert needs["ppo.net_arch"] == trained_bytes(policy_net.parameters(), policy_net.optimizer)
    buffer = model.rollout_buffer
    assert needs["ppo.n_steps"] == sum(array.nbytes for array in vars(buffer).values() if isinstance(array, np.ndarray))
    # a minibatch's forward and backward values: at least what autograd keeps, at most twice it
    env = model.get_env()
    observations = torch.as_tensor(np.stack([env.observation_space.sample() for _ in range(128)]), dtype=torch.float32)
    masks = np.ones((128, env.action_space.n), dtype=bool)
    kept = kept_for_backward(
        lambda: policy_net.evaluate_actions(observations, torch.zeros(128), action_masks=masks), policy_net.parameters()
    )
    assert kept <= needs["ppo.batch_size"] <= 2 * kept


def test_dqn_estimates_are_what_its_networks_and_replay_buffer_allocate(tmp_path):
    import numpy as np

    from agents.training.dqn_env import LegalActionsObservation
    from agents.training.dqn_replay import buffer_arrays
    from agents.training.dqn_train import new_model
    from agents.training.envs import make_training_env

    config = load_config(None, ["algorithm=dqn", "dqn.buffer_size=1000", "dqn.net_arch=[96,64]", "dqn.batch_size=128"])
    env = LegalActionsObservation(make_training_env(config.env, seed=0))
    model, needs = new_model(config, env, tmp_path), needs_of(config)
    target = sum(parameter.numel() * parameter.element_size() for parameter in model.q_net_target.parameters())
    assert needs["dqn.net_arch"] == trained_bytes(model.q_net.parameters(), model.policy.optimizer) + target
    assert needs["dqn.buffer_size"] == sum(array.nbytes for array in buffer_arrays(model.replay_buffer).values())
    # a minibatch through the online network (kept for its backward pass) and the target network
    observations = {
        key: torch.as_tensor(np.stack([space.sample() for _ in range(128)])) for key, space in env.observation_space.items()
    }
    kept = kept_for_backward(lambda: model.q_net(observations), model.q_net.parameters())
    assert 3 * kept <= needs["dqn.batch_size"] <= 4 * kept  # three passes: forward, backward, the target's forward


def linear_inputs(net, inputs) -> int:
    """The bytes of what ``net``'s linear layers read of ``inputs`` (a forward pass, as a table is read)."""
    read = []
    hooks = [
        layer.register_forward_hook(lambda layer, args, out: read.append(args[0].numel() * args[0].element_size()))
        for layer in net
        if isinstance(layer, torch.nn.Linear)
    ]
    with torch.no_grad():
        net(inputs)
    for hook in hooks:
        hook.remove()
    return sum(read)


@pytest.mark.parametrize("rules", ["yacht", "yatzy"])
def test_plan_network_estimate_is_its_training_and_the_reading_of_its_table(rules):
    """A planning network is trained (weights, gradients, Adam) and read over the states of its value table in chunks
    of at most READ_CHUNK states: the largest chunk's layer inputs are live at once."""
    from agents.training.budget import READ_CHUNK
    from agents.training.plan_train import value_model

    config = load_config(None, ["algorithm=plan", "plan.value_model=net", f"env.rules={rules}", "plan.net_arch=[48,32]"])
    model = value_model(config, RULE_SETS[rules])
    chunk = torch.zeros((min(READ_CHUNK, len(model.read_out)), model.net[0].in_features))
    expected = trained_bytes(model.net.parameters(), model.optimizer) + linear_inputs(model.net, chunk)
    assert needs_of(config)["plan.net_arch"] == expected


def test_a_table_value_needs_no_network():
    """``auto`` is a table for rules without a sheet state (Yacht) and a network for the others."""
    fields = lambda overrides: set(needs_of(load_config(None, ["algorithm=plan", *overrides])))  # noqa: E731
    assert fields([]) == fields(["plan.value_model=tabular"]) == {"plan.games_per_iteration"}
    assert fields(["env.rules=yahtzee"]) == {"plan.games_per_iteration", "plan.net_arch", "plan.replay_states"}
    assert fields(["plan.value_model=net"]) == {"plan.games_per_iteration", "plan.net_arch", "plan.replay_states"}


def test_plan_replay_estimate_is_what_a_full_replay_holds():
    """NetValue keeps its replay of states (int64) and, to add states, joins a copy; each is backed up (float64) and
    read as features (float32) when fitted."""
    from agents.training.plan_train import value_model
    from agents.training.plan_values import features

    config = load_config(None, ["algorithm=plan", "plan.value_model=net", "plan.replay_states=300", "plan.epochs=1"])
    model = value_model(config, RULE_SETS["yacht"])
    model.learn(model.read_out[:1000])
    assert len(model.replay) == 300
    backups = model.player.backups(model.current, model.replay)
    inputs = features(model.player.shape, model.num_rows, model.replay, model.upper_max)
    held = 2 * model.replay.nbytes + backups.nbytes + inputs.nbytes
    assert needs_of(config)["plan.replay_states"] == held


def minibatch_activations(net, loss_of, batch_size: int, width: int) -> int:
    return kept_for_backward(lambda: loss_of(net(torch.zeros((batch_size, width)))), net.parameters())


@pytest.mark.parametrize("algorithm", ["plan2", "planN"])
def test_two_player_and_table_network_estimates_are_their_training_and_a_minibatch(algorithm):
    """The weights in training are those of the network the trainer builds (one output for plan2, a share of each seat
    for planN); a minibatch's values, forward and backward, are at least what autograd keeps of it and at most four
    times that (each layer's values and gradients before and after its activation)."""
    from agents.training.plan2_train import WinNet
    from agents.training.planN_train import ShareNet

    players = ["env.num_players=2", "env.opponents=[optimal]"]
    for arch, batch in (("[96,64]", 8), ("[8]", 2048)):  # the weights, then the activations, the larger part
        config = load_config(None, [f"algorithm={algorithm}", *players, f"plan.net_arch={arch}", f"plan.batch_size={batch}"])
        model = (WinNet if algorithm == "plan2" else ShareNet)(RULE_SETS["yacht"], config.plan)
        (need,) = [need for need in memory_needs(config) if need.field == "plan.net_arch"]
        weights = sum(parameter.numel() for parameter in model.net.parameters())
        assert need.what == f"{weights:,} weights in training"
        trained = trained_bytes(model.net.parameters(), model.optimizer)
        kept = minibatch_activations(model.net, lambda out: out.sum(), batch, model.net[0].in_features)
        assert kept <= need.amount - trained <= 4 * kept


def test_two_player_replay_estimate_is_what_a_full_replay_holds():
    """WinNet keeps each replayed state's features (float32) and backup (float32), joined with the new ones: twice."""
    import numpy as np

    from agents.training.plan2_train import WinNet

    config = load_config(None, [*PLAN2, "plan.replay_states=300", "plan.epochs=1"])
    rules = RULE_SETS["yacht"]
    model = WinNet(rules, config.plan)
    everything_open = np.full(400, rules.all_open, dtype=np.int64)
    model.learn(everything_open, everything_open, np.arange(400) - 200, np.full(400, 0.5))
    assert len(model.targets) == 300
    assert needs_of(config)["plan.replay_states"] == 2 * (model.inputs.nbytes + model.targets.nbytes)


def test_table_games_estimate_is_what_an_iteration_of_self_play_holds():
    """planN's games at the largest table: every turn's tables (four int64 a seat) and backups (float64 a seat), kept
    per turn and joined once more, and each table's features."""
    from agents.learned.planN import table_features
    from agents.training.planN_train import ShareNet

    config = load_config(
        None,
        [
            "algorithm=planN",
            "env.num_players=3",
            "env.opponents=[optimal,optimal]",
            "plan.table_sizes=[2,3]",
            "plan.games_per_iteration=4",
        ],
    )
    model = ShareNet(RULE_SETS["yacht"], config.plan)
    value = model.value()
    played = model.player.play_games(value, 4, 3, 0.0, seed=0)
    tables = sum(part.nbytes for part in played.tables)
    held = 2 * (tables + played.backups.nbytes) + table_features(value.sheets, played.tables).nbytes
    assert needs_of(config)["plan.games_per_iteration"] == held


def test_table_replay_estimate_is_what_a_full_replay_holds():
    """ShareNet keeps each replayed table's features and every seat's share (float32) and its size (int64), joined
    with the new ones: twice."""
    from agents.training.planN_train import ShareNet
    from tests.agents.test_planN_train import played

    table = ["env.num_players=3", "env.opponents=[optimal,optimal]", "plan.table_sizes=[2,3]"]
    config = load_config(None, ["algorithm=planN", *table, "plan.replay_states=30"])
    model = ShareNet(RULE_SETS["yacht"], config.plan)
    model.remember(played(3, 40, seed=1))
    assert len(model.seats) == 30
    assert needs_of(config)["plan.replay_states"] == 2 * (model.inputs.nbytes + model.targets.nbytes + model.seats.nbytes)


def test_two_player_games_estimate_is_what_an_iteration_of_self_play_holds():
    """plan2's games: every turn's state (the two sheets and the lead, int64) and backup (float64), kept per turn and
    joined once more, and each state's features."""
    from agents.learned.plan2 import win_features
    from agents.training.plan2_train import WinNet

    config = load_config(None, [*PLAN2, "plan.games_per_iteration=4"])
    rules = RULE_SETS["yacht"]
    model = WinNet(rules, config.plan)
    played = model.player.play_games(model.value(), 4, 0.0, seed=0)
    states = (played.movers, played.others, played.leads, played.backups)
    features = win_features(rules.num_rows, played.movers, played.others, played.leads)
    assert needs_of(config)["plan.games_per_iteration"] == 2 * sum(part.nbytes for part in states) + features.nbytes


def test_every_game_of_the_final_evaluation_adds_to_the_time():
    fewer, more = (time_needs(load_config(None, [f"run.final_eval_games={games}"]))[-1] for games in (3000, 3001))
    assert fewer.field == more.field == "run.final_eval_games" and more.amount > fewer.amount


def test_a_run_of_hours_is_let_through_and_one_of_days_refused():
    hours = [need.amount / 3600 for need in time_needs(load_config(None, ["ppo.total_timesteps=1800000000"]))]
    assert 9 < sum(hours) < MAX_HOURS
    check_budget(load_config(None, ["ppo.total_timesteps=1800000000"]), available=MACHINE)
    with pytest.raises(BudgetError):
        check_budget(load_config(None, ["ppo.total_timesteps=18000000000"]), available=MACHINE)


def test_the_final_evaluation_takes_its_games_at_the_fastest_rate_measured():
    from agents.training.budget import EVAL_GAMES_PER_SECOND

    for games in (2_000, 100_000):
        (final,) = [
            need
            for need in time_needs(load_config(None, [f"run.final_eval_games={games}"]))
            if need.field == "run.final_eval_games"
        ]
        assert final.amount == games / EVAL_GAMES_PER_SECOND
