"""``yacht serve`` told nothing: which agents the lobby offers (the shipped models where torch can read them) and the
port it listens on, away from ``mkdocs serve``'s 8000, where ``yacht simulate-players`` looks for it by default."""

from __future__ import annotations

import argparse
import gc
import sys
import warnings

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the lobby's offer is read through Starlette's TestClient")

import uvicorn  # noqa: E402

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from agents.registry import shipped_policies  # noqa: E402
from yacht_play import simulate  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.options import DEFAULT_PORT  # noqa: E402
from yacht_play.serve import app, games  # noqa: E402
from yacht_play.serve.cli import BASELINE_AGENTS, default_agents  # noqa: E402

SHIPPED = [
    *("ppo:yacht", "ppo:yahtzee", "ppo:yatzy", "plan:yacht", "plan:yahtzee", "plan:yatzy", "plan2:yacht"),
    *("planN:yacht", "planN:yahtzee", "planN:yatzy"),
]


@pytest.fixture
def started(monkeypatch):
    """Run ``yacht serve`` as far as it goes before serving: what it loaded and where it would listen."""
    seen = {}

    class LoadsNothing:
        def __init__(self, engine, agents, rules=None):
            seen["agents"] = agents

    monkeypatch.setattr(games, "GameService", LoadsNothing)
    monkeypatch.setattr(app, "create_app", lambda service, limit, body_timeout: None)
    monkeypatch.setattr(uvicorn, "run", lambda served, **options: seen.update(options))
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the server's own tuning, not this test process's
    return seen


def test_the_shipped_models_are_the_package_files():
    assert list(shipped_policies()) == SHIPPED


def test_serve_offers_the_baselines_and_the_shipped_models_on_port_8080(started, tmp_path, capsys):
    pytest.importorskip("torch", reason="the shipped models are read with torch (the train extra)")
    assert main(["serve", "--db", str(tmp_path / "yacht.db")]) == 0
    assert started["agents"] == ["random", "greedy", "optimal", *SHIPPED]
    assert started["port"] == DEFAULT_PORT == 8080
    assert "need the train extra" not in capsys.readouterr().err


def test_without_torch_serve_offers_the_baselines_and_says_what_brings_the_models(started, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError, as where it is not installed
    assert main(["serve", "--db", str(tmp_path / "yacht.db")]) == 0
    assert started["agents"] == list(BASELINE_AGENTS) == ["random", "greedy", "optimal"]
    error = capsys.readouterr().err
    assert "ppo:yacht" in error and "need the train extra (torch)" in error and "pip install 'yacht-rl[train]'" in error


def test_named_agents_replace_the_default(started, tmp_path):
    assert main(["serve", "--db", str(tmp_path / "yacht.db"), "--agents", "greedy,ppo:yacht", "--port", "9001"]) == 0
    assert started["agents"] == ["greedy", "ppo:yacht"] and started["port"] == 9001


def test_simulated_players_look_where_serve_listens_by_default():
    parser = argparse.ArgumentParser()
    simulate.configure(parser)
    assert parser.parse_args([]).url == f"http://127.0.0.1:{DEFAULT_PORT}"


def test_the_lobby_offers_every_default_agent_under_the_rules_its_file_names(tmp_path):
    """The default agents really load: each shipped model is offered for the rule set it was trained on."""
    pytest.importorskip("torch", reason="the shipped models are read with torch (the train extra)")
    from yacht_play import store

    service = games.GameService(store.connect(str(tmp_path / "yacht.db")), default_agents())
    with TestClient(app.create_app(service)) as client:
        offered = {agent["policy"]: agent for agent in client.get("/api/agents").json()["agents"]}
    assert list(offered) == ["random", "greedy", "optimal", *SHIPPED]
    for name in SHIPPED:
        assert offered[name]["rules"] == [name.split(":")[1]], name
    assert not offered["plan2:yacht"]["alone"] and offered["plan2:yacht"]["table_sizes"] == [2, 2]
    for rules in ("yacht", "yahtzee", "yatzy"):  # the table planners sit at every table they learned, never alone
        assert not offered[f"planN:{rules}"]["alone"] and offered[f"planN:{rules}"]["table_sizes"] == [2, 5]


def test_the_lobby_says_what_each_agent_is_in_the_words_of_help(tmp_path):
    """Names such as exact2, br:optimal and plan2:yacht are not explanations: each offered agent carries its one line."""
    from agents.registry import policy_spec
    from yacht_play import store

    names = ["optimal", "win", "softmax:2"]  # agents that need no solved two-player game, which CI does not have
    service = games.GameService(store.connect(str(tmp_path / "yacht.db")), names)
    with TestClient(app.create_app(service)) as client:
        offered = {agent["policy"]: agent for agent in client.get("/api/agents").json()["agents"]}
    for name in names:
        assert offered[name]["about"] == policy_spec(name).help and offered[name]["about"], name
    assert "chance of finishing first" in offered["win"]["about"]
    # the names the lobby shows without saying what they are get the same one line
    assert "solved two-player game" in policy_spec("exact2").help and "best response" in policy_spec("br:optimal").help
