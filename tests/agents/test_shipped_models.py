"""The models shipped in models/: each loads by ``ppo:PATH`` under its rule set, plays legally, and beats greedy.

Each model is compared with ``greedy`` on the same dice (common random numbers), so the test rests on
a paired confidence interval of the score difference, and on the DP's regret per decision.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="ppo models need the train extra")

from agents.evaluate import play_games  # noqa: E402
from agents.evaluation.stats import mean_ci  # noqa: E402
from agents.learned.model_files import read_model_file  # noqa: E402
from agents.registry import make_policy  # noqa: E402
from yacht_env import YachtEnv  # noqa: E402
from yacht_env.rules import rule_set  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = {"ppo.safetensors": "yacht", "yahtzee.safetensors": "yahtzee", "yatzy.safetensors": "yatzy"}


def test_every_shipped_model_is_tested_here():
    assert sorted(path.name for path in (ROOT / "models").glob("*.safetensors")) == sorted(SHIPPED)


@pytest.mark.parametrize("file, rules", sorted(SHIPPED.items()))
def test_a_shipped_model_plays_its_rules_legally_and_beats_greedy_on_the_same_dice(file, rules):
    path = ROOT / "models" / file
    metadata, _ = read_model_file(path)
    assert metadata["rules"] == rules and metadata["rules_fingerprint"] == rule_set(rules).fingerprint
    model = make_policy(f"ppo:{path}", rules=rules)
    env = YachtEnv(rules=rules)
    obs, info = env.reset(seed=5)
    terminated = False
    while not terminated:
        obs, _, terminated, _, info = env.step(model.act(obs, info["action_mask"]))
        assert not info["illegal_action"]
    # 500 games: the paired interval's lower end stays 8 (yacht), 27 (yahtzee) and 37 (yatzy) points above 0
    trained = play_games(model, games=500, seed=0, rules=rules)
    greedy = play_games(make_policy("greedy", rules=rules), games=500, seed=0, rules=rules)
    difference, low, _ = mean_ci(trained.scores - greedy.scores)  # paired: the same dice
    assert low > 0, f"{file} scores {difference:+.2f} points a game against greedy under {rules}"
    assert trained.regret.sum() / trained.decisions.sum() < greedy.regret.sum() / greedy.decisions.sum()


@pytest.mark.parametrize("file, other", [("yahtzee.safetensors", "yatzy"), ("yatzy.safetensors", "yacht")])
def test_a_shipped_model_is_refused_under_other_rules_naming_both(file, other):
    with pytest.raises(ValueError, match=f"trained on the '{SHIPPED[file]}' rules, but this game plays '{other}'"):
        make_policy(f"ppo:{ROOT / 'models' / file}", rules=other)


def test_agents_evaluate_loads_the_yahtzee_model_by_its_path(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.evaluate",
            "--rules",
            "yahtzee",
            "--policy",
            "ppo:models/yahtzee.safetensors",
            "--policy",
            "optimal",
            "--games",
            "200",
            "--no-progress",
            "--json",
            str(tmp_path / "e.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "e.json").read_text())
    model, optimal = report["policies"]
    assert report["rules"] == "yahtzee" and model["policy"] == "ppo:models/yahtzee.safetensors"
    assert 0 < model["regret_per_decision"] and 0 <= model["upper_bonus_rate"] <= 1 and 0 <= model["five_alike_rate"] <= 1
    assert optimal["regret_per_decision"] == 0


def test_yacht_play_seats_the_yatzy_model_against_a_person(tmp_path):
    from yacht_play.match import load_games
    from yacht_play.terminal import ScriptedConsole
    from yacht_play.terminal import main as play_main

    rules = rule_set("yatzy")
    path = tmp_path / "vs.jsonl"
    plan = [f"s {turn}" for turn in range(1, 5)] + ["q"]
    console = ScriptedConsole(plan, height=40)
    assert (
        play_main(["--rules", "yatzy", "--vs", "ppo:models/yatzy.safetensors", "--seed", "3", "--record", str(path)], console)
        == 0
    )
    game = load_games(path).games[0]
    agent_rows = [d for d in game.decisions if d["seat"] == 1 and d["action"] >= rules.dice.num_rerolls]
    assert game.header["rules"] == "yatzy" and len(agent_rows) == 4  # the model answered each of the person's turns
    assert "ppo:models/yatzy.safetensors" in console.text


def test_yacht_serve_offers_the_yahtzee_model_for_yahtzee_games_only(tmp_path, monkeypatch):
    pytest.importorskip("starlette", reason="the serve tests need the serve extra")
    from tests.yacht_play.test_rule_set_serve import create, play_optimally, stored
    from tests.yacht_play.test_serve_api import TestClient
    from yacht_play import store as db
    from yacht_play.serve.app import create_app
    from yacht_play.serve.games import GameService

    model = "ppo:models/yahtzee.safetensors"
    service = GameService(db.connect(str(tmp_path / "y.db")), ["greedy", model])
    with TestClient(create_app(service)) as client:
        offered = {a["policy"]: a["rules"] for a in client.get("/api/agents").json()["agents"]}
        assert offered["ppo:yahtzee.safetensors"] == ["yahtzee"]  # offered by its file name, never the server's path
        secret = create(client, monkeypatch, "yahtzee", 11, mode="table", agents=[model])
        view, _ = play_optimally(client, secret)
        record = stored(service, secret)
        assert view["finished"] and record.header["rules"] == "yahtzee"
        assert sum(1 for d in record.decisions if d["seat"] == 1 and d["points"] is not None) == 13
        assert np.isfinite(db.game_row(service.engine, secret).loss)
