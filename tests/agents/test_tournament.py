"""Policies at a table, tournaments, and table training configs (agents on the multi-player envs)."""

import json
from statistics import NormalDist

import numpy as np
import pytest

from agents.evaluation.tournament import play_table, run_table, tournament
from agents.policies.guard import unguarded
from agents.registry import make_policy
from agents.training.config import ConfigError, load_config
from tests.yacht_env.test_multiplayer import FLAT, SCORE, play_pettingzoo, table_env
from yacht_env.table import pettingzoo_env as multiplayer
from yacht_env.table.outcome import win_shares

pytestmark = [pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")]
# two players' totals in three deals of two seatings: win rates and mean scores with intervals of some width
THREE_DEALS = np.array([[200, 100], [150, 150], [180, 100], [130, 170], [210, 90], [140, 190]])


@pytest.fixture(scope="module")
def table_model_path(tmp_path_factory):
    from sb3_contrib import MaskablePPO

    from agents.learned.model_files import export_model, load_model_file

    env = table_env(["greedy"], reward_mode="win", observation_encoding="onehot")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    path = tmp_path_factory.mktemp("models") / "table.safetensors"
    export_model(model, path)
    assert load_model_file(path).metadata["num_players"] == 2
    return path


def test_a_model_trained_at_a_table_plays_opponent_and_tournament(table_model_path):
    from agents.learned.table_policy import TablePPOPolicy
    from agents.registry import make_table_policy

    policy = make_table_policy(f"ppo:{table_model_path}", 2)
    assert isinstance(unguarded(policy), TablePPOPolicy) and policy.table_encoding.name == "onehot"
    env = table_env([f"ppo:{table_model_path}"])
    obs, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(SCORE + int(np.flatnonzero(info["action_mask"][SCORE:])[0]))
    assert None not in env.unwrapped.sheets[1]
    result, _ = tournament(["greedy", f"ppo:{table_model_path}"], games=8, seed=0)
    assert result.games == 8
    with pytest.raises(ValueError, match="no table observation of 3 players"):
        make_table_policy(f"ppo:{table_model_path}", 3)


def test_tournament_games_are_the_pettingzoo_games_in_every_seating():
    names = ["optimal", "greedy", "random"]
    policies = [make_policy(name, seed=0) for name in names]
    totals = play_table(policies, games=6, seed=40)
    assert totals.shape == (6, 3)
    for game in range(6):
        deal, rotation = divmod(game, 3)
        seat_of = [(i + rotation) % 3 for i in range(3)]
        policy_at = {seat: i for i, seat in enumerate(seat_of)}
        env = multiplayer.env(num_players=3, reward_mode="score")

        def choose(agent, observation):
            policy = policies[policy_at[int(agent.split("_")[1])]]
            return policy.act(observation["observation"][:FLAT], observation["action_mask"])

        play_pettingzoo(env, choose, seed=40 + deal)
        for i in (0, 1):  # optimal and greedy are deterministic; random draws its actions in another order
            assert totals[game, i] == env.unwrapped.totals[f"player_{seat_of[i]}"]


def test_duplicate_seatings_cancel_the_luck_of_the_dice():
    """Two copies of one deterministic policy: each deal's two seatings swap their dice, so every
    deal is exactly one win each (ties half) and the win rate is exactly one half."""
    result, log = run_table([make_policy("optimal"), make_policy("optimal")], ["optimal", "optimal"], games=200, seed=3)
    assert log.names == ["optimal", "optimal (2)"]
    assert result.standings[0].win_rate == 0.5 and result.standings[0].win_rate_ci95 == (0.5, 0.5)
    shares = win_shares(log.totals)
    np.testing.assert_allclose(shares.sum(axis=1), 1)
    assert result.standings[0].shared_wins == int((shares[:, 0] == 0.5).sum())
    assert result.head_to_head[0][1] == 0.5 and result.head_to_head[0][0] is None


def test_a_win_rates_interval_stays_within_0_and_1_where_the_normal_one_would_not():
    from agents.evaluate import mean_ci
    from agents.evaluation.tournament import TableLog, summarize_table

    # four deals of two games: the first policy's averages 1, 0.5, 1, 1 (mean 0.875, the normal interval reaching 1.12)
    totals = np.array([[200, 100], [150, 120], [180, 100], [130, 170], [210, 90], [140, 90], [220, 160], [190, 180]])
    standings = summarize_table(TableLog(["a", "b"], totals, deals=4), seed=0).standings
    deals = win_shares(totals).reshape(4, 2, 2).mean(axis=1)
    for i, standing in enumerate(standings):
        mean, low, high = mean_ci(deals[:, i])
        assert standing.win_rate == mean and standing.win_rate_ci95 == (max(low, 0.0), min(high, 1.0))
        assert (low < 0.0) if i else (high > 1.0)  # each interval was clipped
        _, score_low, score_high = mean_ci(totals[:, i].reshape(4, 2).mean(axis=1))
        assert standing.mean_score_ci95 == (score_low, score_high)  # a score is no rate: never clipped


@pytest.mark.parametrize("seats", [2, 3, 5])
def test_a_table_needs_two_deals_of_games_for_its_intervals(seats):
    policies = [make_policy("greedy") for _ in range(seats)]
    with pytest.raises(ValueError, match=rf"^games must be at least {2 * seats} \(two deals, .*\), got {2 * seats - 1}$"):
        run_table(policies, ["greedy"] * seats, 2 * seats - 1, 0)
    assert run_table(policies, ["greedy"] * seats, 2 * seats, 0)[0].deals == 2


def test_the_head_to_head_table_gives_each_pairs_rate_in_percent_with_its_interval(capsys):
    from agents.evaluation.tournament import print_tournament
    from tests.agents.test_evaluate import cells

    names = ["optimal", "greedy", "random"]
    result, _ = run_table([make_policy(name, seed=0) for name in names], names, 12, 0)
    print_tournament(result)
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if "head to head" in line)
    for i, name in enumerate(names):
        row = next(line for line in lines[start:] if line.startswith(f"│ {name} "))
        rates, intervals = result.head_to_head[i], result.head_to_head_ci95[i]
        expected = [
            "—" if j == i else f"{100 * rates[j]:.1f}% [{100 * intervals[j][0]:.1f}, {100 * intervals[j][1]:.1f}]"
            for j in range(len(names))
        ]
        assert cells(row)[1:] == expected and rates[i] is None


def test_the_tournament_plot_marks_the_fair_share_and_each_policys_mean_score(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    from agents.evaluation.tournament import save_tournament_plot

    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)  # the figure, kept to be read once its PNG is written
    names = ["optimal", "greedy", "random"]
    result, log = run_table([make_policy(name, seed=0) for name in names], names, 6, 0)
    save_tournament_plot(tmp_path / "t.png", result, log)
    (figure,) = drawn
    rates, scores = figure.axes
    assert [text.get_text() for text in rates.get_legend().get_texts()] == ["fair share 33.3%"]
    (fair,) = [line for line in rates.get_lines() if line.get_label() == "fair share 33.3%"]
    assert list(fair.get_ydata()) == [100 / 3, 100 / 3]
    (bars,) = [c for c in rates.collections if isinstance(c, LineCollection)]  # each win rate's 95% interval
    for segment, standing in zip(bars.get_segments(), result.standings, strict=True):
        assert list(segment[:, 1]) == pytest.approx([100 * bound for bound in standing.win_rate_ci95])
    means = [f"{name} (mean {log.totals[:, i].mean():.1f})" for i, name in enumerate(names)]
    assert [text.get_text() for text in scores.get_legend().get_texts()] == means
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tournament_orders_the_baselines(tmp_path):
    from agents.evaluate import main

    main(
        [
            "--table",
            "optimal,greedy,random",
            "--games",
            "300",
            "--no-progress",
            "--json",
            str(tmp_path / "t.json"),
            "--plot",
            str(tmp_path / "t.png"),
        ]
    )
    report = json.loads((tmp_path / "t.json").read_text())
    rates = {s["policy"]: s["win_rate"] for s in report["standings"]}
    assert rates["optimal"] > rates["greedy"] > rates["random"]
    assert sum(rates.values()) == pytest.approx(1)
    assert report["games"] == 300 and report["deals"] == 100
    assert (tmp_path / "t.png").stat().st_size > 0


@pytest.mark.parametrize(
    "argv, message", [(["--table", "optimal"], "2 to 5 policies"), (["--table", "optimal,chess"], "unknown policy 'chess'")]
)
def test_tournament_cli_rejects_bad_tables(argv, message, capsys):
    from agents.evaluate import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv + ["--games", "20", "--no-progress"])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.num_players=2"], "needs 1 opponent"),
        (["env.reward_mode=win"], "needs opponents"),
        (["env.num_players=2", "env.opponents=[optimal]", "env.vectorized=true"], "vectorized env plays solitaire only"),
        (["env.num_players=2", "env.opponents=[expert]"], "opponent: unknown policy 'expert'"),
    ],
)
def test_table_training_config_is_validated(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_win_vs_optimal_config_trains_at_a_two_player_table():
    from agents.training.envs import make_training_env

    config = load_config("configs/win_vs_optimal.yaml", ["env.num_envs=2"])
    assert config.env.num_players == 2 and config.env.opponents == ["optimal"] and config.env.reward_mode == "win"
    env = make_training_env(config.env, seed=0)
    seats = [e.unwrapped.seat for e in env.envs]
    assert seats == [0, 1]  # the learner learns both seats a tournament gives it
    assert env.observation_space.shape == (63 + 1 + 13,)  # features, own total, the opponent


def test_the_progress_bar_counts_every_game_of_the_whole_deals(capsys):
    names = ["greedy", "random", "greedy"]
    run_table([make_policy(name, seed=0) for name in names], names, 7, 0, show_progress=True)  # 7 games: 3 deals of 3
    shown = capsys.readouterr().err
    assert "9/9 " in shown and "/7 " not in shown


def test_a_table_stops_naming_the_illegal_action_when_even_the_stand_in_plays_one():
    """The guard stands optimal in for a policy that cannot choose; were the stand-in to play an illegal action, the
    table stops with that action named (not another row's legal one), rather than play on a position it cannot reach."""
    from agents.policies.guard import GuardedPolicy
    from agents.policies.policy import Policy

    class Failing(Policy):
        name = "failing"

        def act_batch(self, observations, action_masks):
            raise RuntimeError("no choice")

    class StandIn(Policy):  # its first row plays legally, every other row its first illegal action where it has one
        name = "stand-in"
        illegal = None

        def act_batch(self, observations, action_masks):
            masks = np.asarray(action_masks)
            actions = np.argmax(masks != 0, axis=1)
            for row in range(1, len(masks)):
                if (masks[row] == 0).any():
                    actions[row] = int(np.argmin(masks[row] != 0))
                    if StandIn.illegal is None:
                        StandIn.illegal, StandIn.legal = int(actions[row]), int(actions[0])
            return actions

    faulty = GuardedPolicy(Failing(), on_replace=lambda replacement: None, fallback=StandIn())
    with pytest.raises(ValueError) as raised:
        play_table([make_policy("greedy"), faulty], games=4, seed=0)
    assert StandIn.illegal is not None and StandIn.illegal != StandIn.legal
    assert str(raised.value) == f"policy 'failing' chose illegal action {StandIn.illegal}"


def test_graded_table_games_default_to_the_deals_of_seed_0_as_play_table_does():
    from agents.evaluation.tournament import play_table_games

    policies = [make_policy("greedy"), make_policy("random", seed=1)]
    assert (play_table_games(policies, 4).totals == play_table(policies, 4)).all()
    assert (play_table_games(policies, 4).totals == play_table_games(policies, 4, seed=0).totals).all()
    assert not (play_table_games(policies, 4).totals == play_table_games(policies, 4, seed=1).totals).all()


def test_a_graded_tables_losses_are_given_in_points_of_chance_per_decision_and_per_game_over_deals():
    from agents.evaluation.tournament import TableLog, summarize_table

    totals = np.array([[200, 100], [150, 120], [180, 100], [130, 170]])  # two deals of two games
    losses = np.array([[0.01, 0.0], [0.03, 0.02], [0.0, 0.05], [0.02, 0.01]])  # summed over each game's decisions
    decisions = np.array([[26, 26], [26, 26], [26, 26], [26, 26]])
    standings = summarize_table(TableLog(["a", "b"], totals, 2, losses=losses, decisions=decisions), seed=0).standings
    for i, standing in enumerate(standings):
        assert standing.loss_per_decision_pp == pytest.approx(100 * losses[:, i].sum() / 104)
        per_deal = 100 * losses[:, i].reshape(2, 2).mean(axis=1)  # a deal's two seatings are one observation
        assert standing.loss_per_game_pp == pytest.approx(per_deal.mean())
        half_width = NormalDist().inv_cdf(0.975) * per_deal.std(ddof=1) / np.sqrt(2)
        assert standing.loss_per_game_pp_ci95 == pytest.approx((per_deal.mean() - half_width, per_deal.mean() + half_width))
        assert standing.replaced_games == 0 and standing.replaced_decisions == 0  # the log records no stand-in


def test_the_standings_table_prints_each_policys_figures_with_their_intervals(capsys):
    from agents.evaluation.tournament import TableLog, print_tournament, summarize_table
    from tests.agents.test_evaluate import cells

    losses = np.array([[0.01, 0.0], [0.03, 0.02], [0.0, 0.05], [0.02, 0.01], [0.04, 0.0], [0.0, 0.03]])
    log = TableLog(["a", "b"], THREE_DEALS, 3, losses=losses, decisions=np.full((6, 2), 12))
    result = summarize_table(log, seed=0, grading="graded here")
    print_tournament(result)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "win rate" in line)
    assert cells(header) == [
        "policy", "win rate [95% CI]", "sole wins", "shared wins", "mean score [95% CI]",
        "loss per decision, pp", "loss per game, pp [95% CI]",
    ]  # fmt: skip
    for s in result.standings:
        row = next(line for line in lines if line.startswith(f"│ {s.policy} "))  # the standings come first
        (win_low, win_high), (score_low, score_high), (loss_low, loss_high) = (
            s.win_rate_ci95, s.mean_score_ci95, s.loss_per_game_pp_ci95
        )  # fmt: skip
        assert 0 < win_low < s.win_rate < win_high < 1 and loss_low < s.loss_per_game_pp < loss_high
        assert cells(row) == [
            s.policy,
            f"{100 * s.win_rate:.2f}% [{100 * win_low:.2f}, {100 * win_high:.2f}]",
            str(s.sole_wins),
            str(s.shared_wins),
            f"{s.mean_score:.2f} [{score_low:.2f}, {score_high:.2f}]",
            f"{s.loss_per_decision_pp:.4f}",
            f"{s.loss_per_game_pp:.3f} [{loss_low:.3f}, {loss_high:.3f}]",
        ]
    assert any(line.startswith("graded here: a decision's loss is the drop in its chance of winning") for line in lines)


def test_the_plots_error_bars_span_each_win_rates_interval(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    from agents.evaluation.tournament import TableLog, save_tournament_plot, summarize_table

    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    log = TableLog(["a", "b"], THREE_DEALS, 3)
    result = summarize_table(log, seed=0)
    save_tournament_plot(tmp_path / "t.png", result, log)
    (figure,) = drawn
    (bars,) = [c for c in figure.axes[0].collections if isinstance(c, LineCollection)]
    for segment, standing in zip(bars.get_segments(), result.standings, strict=True):
        low, high = standing.win_rate_ci95
        assert low < standing.win_rate < high  # an interval of some width, drawn from end to end
        assert sorted(segment[:, 1]) == pytest.approx([100 * low, 100 * high])
