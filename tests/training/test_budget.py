"""A config inside every field's bounds can still ask for more than the machine has: train.py estimates its memory
and its time first (agents.training.budget) and refuses, in one line naming the field, what cannot fit."""

from __future__ import annotations

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
        (["run.eval_every=1000", "run.eval_games=1e6", "ppo.total_timesteps=1e6"], "run.eval_games"),
        (["algorithm=plan", "run.eval_every=1", "plan.total_games=1e6"], "run.eval_games"),
    ],
)
def test_a_run_that_would_take_days_is_refused_naming_the_field(overrides, field):
    config = load_config(None, overrides)
    assert sum(need.amount for need in time_needs(config)) > MAX_HOURS * 3600
    with pytest.raises(BudgetError, match=f"^{field} makes the run take at least [0-9,]+ hours") as refused:
        check_budget(config, available=MACHINE)
    assert "\n" not in str(refused.value)


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
