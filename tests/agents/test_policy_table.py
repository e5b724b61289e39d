"""A policy added to the table of :mod:`agents.registry` in one place is known everywhere a policy is named:
the evaluation, the terminal game (and its ``--resume``), the server's lobby and the training configs."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest

from agents import registry
from agents.evaluate import main as evaluate_main
from agents.policies.guard import unguarded
from agents.policies.policy import Policy
from agents.registry import PolicySpec, register
from agents.training.config import ConfigError, load_config
from yacht_env.game import MAX_PLAYERS
from yacht_play.records import read_records
from yacht_play.terminal import ScriptedConsole
from yacht_play.terminal import main as play_main

NAME = "first-legal"


class FirstLegalPolicy(Policy):
    """Plays the lowest legal action: re-rolls while it may, then scores the first open row."""

    name = NAME

    def act_batch(self, observations, action_masks):
        return np.argmax(np.asarray(action_masks) != 0, axis=1).astype(np.int64)


SPEC = PolicySpec(
    NAME,
    "the lowest legal action",
    lambda name, rules, encoding, seed: FirstLegalPolicy(rules, encoding),
    rule_sets=lambda name: ["yacht"],
    refusal="agent {name} plays only the yacht rules; this game plays {rules}: choose {general}",
    resumable=True,
)


@pytest.fixture
def first_legal():
    """The table with the one entry added (and without it again after the test)."""
    register(SPEC)
    yield
    del registry.POLICIES[NAME]


@pytest.mark.parametrize(
    "names, sentence", [(["random"], "random"), (["random", "greedy"], "random or greedy"), ("abc", "a, b or c")]
)
def test_names_are_listed_as_a_sentence_lists_them(names, sentence):
    assert registry.or_list(names) == sentence


def test_only_an_entry_that_says_so_is_resumable_and_none_that_loads_a_file_is():
    assert not PolicySpec("quiet", "an entry that says nothing of resuming", SPEC.solitaire).resumable
    resumable = registry.resumable_policies()
    assert {"random", "greedy", "optimal"} <= set(resumable)
    assert not [spec.name for spec in registry.POLICIES.values() if spec.argument == "PATH" and spec.name in resumable]


def test_the_policies_that_play_alone_are_named_with_those_reading_their_total_unless_asked_without():
    alone, without = registry.solitaire_names(), registry.solitaire_names(reading_totals=False)
    assert "target:T" in alone and "target:T" not in without  # its total comes with a table observation only
    assert set(without) == set(alone) - {"target:T"} and {"random", "greedy", "optimal"} <= set(without)


def test_a_policy_that_plays_only_at_a_table_is_refused_alone_with_its_name_or_its_pattern_as_the_example():
    spec = dataclasses.replace(SPEC, name="first-legal:", argument="N", solitaire=None, table=lambda *a: None, table_sizes=(2, 2))
    longest = "first-legal:" + "9" * (registry.MAX_ECHO - len("first-legal:"))
    for name, example in (
        ("first-legal:3", "first-legal:3"),
        (longest, longest),  # as long as a message repeats a name
        (longest + "9", "first-legal:N"),  # longer: the pattern stands for it
        ("first-legal:\x1b[2J", "first-legal:N"),  # not printable
    ):
        with pytest.raises(ValueError) as refused:
            spec.build(name)
        assert str(refused.value).endswith(
            "plays at a table of 2 players (it reads the opponents' scores); "
            f"play it at a table, e.g. python -m agents.evaluate --table {example},optimal"
        )


def test_a_policy_s_table_sizes_are_checked_only_for_tables_the_game_allows():
    spec = dataclasses.replace(SPEC, table_sizes=(2, 3))
    for players in (0, MAX_PLAYERS + 1, 2, 3):  # no table of the game (its own check refuses it), or one it sits at
        spec.check_plays_at(NAME, players)
    for players in (1, 4, MAX_PLAYERS):
        with pytest.raises(ValueError, match=f"^agent '{NAME}' plays at a table of 2 to 3 players; this table has {players}$"):
            spec.check_plays_at(NAME, players)


def test_the_names_read_from_the_table_follow_it_and_no_other_name_is_made_up(first_legal):
    assert NAME in registry.POLICY_NAMES and registry.POLICY_NAMES == registry.policy_names()
    assert registry.MODEL_PREFIXES == registry.model_prefixes()
    for missing in ("no_such_name", "MODEL_PREFIXES_", "MODEL_PREFIXE", "POLICY_NAME"):  # around the two names as text sorts
        with pytest.raises(AttributeError, match=f"^module 'agents.registry' has no attribute '{missing}'$"):
            getattr(registry, missing)


def test_the_new_entry_is_a_policy_name_and_builds_alone_and_at_a_table(first_legal):
    assert NAME in registry.POLICY_NAMES
    assert registry.check_policy_name(NAME) == NAME
    assert isinstance(unguarded(registry.make_policy(NAME)), FirstLegalPolicy)
    assert all(isinstance(unguarded(p), FirstLegalPolicy) for p in registry.make_opponents([NAME, NAME]))
    with pytest.raises(ValueError, match="registered already"):
        register(SPEC)


def test_unregistered_the_name_is_refused_everywhere(capsys):
    with pytest.raises(ValueError, match=f"unknown policy '{NAME}'; expected one of random, greedy"):
        registry.make_policy(NAME)
    with pytest.raises(SystemExit):
        evaluate_main(["--policy", NAME, "--games", "2", "--no-progress"])
    assert f"unknown policy '{NAME}'" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=f"unknown policy '{NAME}'"):
        load_config(None, ["env.num_players=2", f"env.opponents=[{NAME}]"])


def test_the_evaluation_plays_and_lists_it(first_legal, capsys):
    with pytest.raises(SystemExit):
        evaluate_main(["--help"])
    help_text = capsys.readouterr().out
    unwrapped = " ".join(re.sub(r"-\n\s+", "-", help_text).split())  # argparse may wrap a name at its hyphen
    assert f"{NAME} (repeatable" in unwrapped  # the --policy help
    assert re.search(rf"\n  {NAME} +the lowest legal action\n", help_text)  # and its help line
    evaluate_main(["--policy", NAME, "--games", "2", "--no-progress"])
    assert NAME in capsys.readouterr().out


def test_the_terminal_game_seats_it_and_resume_rebuilds_it(first_legal, tmp_path):
    record = tmp_path / "game.jsonl"
    console = ScriptedConsole(["s 1", "q"])  # score one turn, the agent plays its turn, then stop
    assert play_main(["--seed", "3", "--vs", NAME, "--record", str(record)], console) == 0
    assert console.output[-1].endswith(f"yacht play --resume {record}")  # no --vs needed: a record may name it
    game = read_records(record).games[0]
    assert game.players[1]["policy"] == NAME
    agent_turn = [d for d in game.decisions if d["seat"] == 1]
    assert [d["action"] for d in agent_turn][-1] == 32  # re-rolls while it may, then the first row
    resumed = ScriptedConsole([f"s {row}" for row in range(2, 13)])
    assert play_main(["--resume", str(record)], resumed) == 0  # the record's agent rebuilt from its name
    assert read_records(record).games[0].finished


def test_the_server_offers_it_for_the_rule_sets_it_plays(first_legal, tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from yacht_play import store as db
    from yacht_play.serve.app import create_app
    from yacht_play.serve.games import GameService

    service = GameService(db.connect(str(tmp_path / "yacht.db")), [NAME, "optimal"])
    with TestClient(create_app(service)) as client:
        lobby = client.get("/api/agents").json()["agents"]
        assert lobby[0] == {
            "policy": NAME,
            "name": NAME,
            "rules": ["yacht"],
            "alone": True,
            "table_sizes": [1, 5],
            "about": "the lowest legal action",
        }
        created = client.post("/api/games", json={"name": "ann", "mode": "table", "agents": [NAME]})
        assert created.status_code == 201, created.text
        refused = client.post("/api/games", json={"name": "ann", "mode": "table", "agents": [NAME], "rules": "yahtzee"})
        assert refused.status_code == 400
        assert refused.json()["error"] == (
            f"agent '{NAME}' plays only the yacht rules; this game plays yahtzee: choose random, greedy, optimal"
        )


def test_a_training_config_takes_it_as_an_opponent(first_legal):
    config = load_config(None, ["env.num_players=2", f"env.opponents=[{NAME}]"])
    assert config.env.opponents == [NAME]


def test_a_name_reads_every_seats_total_as_its_entry_says_and_an_unknown_one_does_not():
    readers = {spec.name for spec in registry.POLICIES.values() if spec.reads_totals}
    assert {"win", "target:", "exact2", "br:", "plan2:", "planN:"} <= readers
    for name in ("win", "target:150", "exact2", "br:optimal", "plan2:yacht", "planN:yacht"):
        assert registry.reads_totals(name), name
    for name in ("random", "greedy", "optimal", "ppo:yacht", "softmax:2", "no-such-policy"):
        assert not registry.reads_totals(name), name
