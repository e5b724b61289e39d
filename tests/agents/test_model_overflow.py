"""Model files whose finite weights overflow float32 at some positions only: refused on load, and replaced in play.

The hostile file is the shipped model with 40 hidden units rewired to read only the "0 or 1 rolls left" inputs,
at weights of 1e18 in two layers: every position with 2 rolls left (where the server's warm-up plays) gives the
shipped model's logits, every other position overflows to infinity or NaN.
"""

import random
import warnings

import numpy as np
import pytest

pytest.importorskip("torch", reason="ppo: models need the train extra")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

import agents.learned.model_files as model_files
from agents.learned.model_files import ModelLoadError, load_model_file
from agents.learned.ppo import PPOPolicy
from agents.policies.guard import FALLBACK
from agents.policies.policy import PolicyOutputError
from agents.registry import make_policy
from tests.agents.test_model_files import set_field, tampered
from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT
from yacht_play import store as db
from yacht_play.serve.app import create_app
from yacht_play.serve.games import GameService, shown_policy

FEW_ROLLS_LEFT = slice(36, 38)  # the shipped model's "features" inputs for 0 and 1 rolls left
HIDDEN = slice(0, 40)


def overflow_without_rolls(meta, tensors):
    """Hidden units 0..39 fire (at 1e18) only when fewer than 2 rolls are left, and layer 2 multiplies them by 1e18."""
    tensors["policy.0.weight"][HIDDEN] = 0
    tensors["policy.0.weight"][HIDDEN, FEW_ROLLS_LEFT] = 1e18
    tensors["policy.0.bias"][HIDDEN] = 0
    tensors["policy.1.weight"][:, HIDDEN] = 1e18


@pytest.fixture(scope="module")
def overflowing(tmp_path_factory):
    return tampered(tmp_path_factory.mktemp("overflow"), "overflow", overflow_without_rolls)


@pytest.fixture
def unchecked(monkeypatch):
    """Loading skips the overflow probe, as a model file did before it: the play-time guard is all that is left."""
    monkeypatch.setattr(model_files, "check_finite_outputs", lambda model, where: None)


def test_a_model_that_overflows_only_with_few_rolls_left_is_refused_when_it_loads(overflowing):
    overflow = r"overflow \(NaN, infinite or beyond 1e\+06\) at \d+ of \d+ test positions"
    with pytest.raises(ModelLoadError, match=overflow) as error:
        load_model_file(overflowing)
    message = str(error.value)
    assert str(overflowing) in message and "\n" not in message
    assert "0 rolls left" in message or "1 rolls left" in message


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda meta, tensors: tensors["policy.1.weight"].fill_(3e38), r"policy.1.weight holds a value of magnitude 3e\+38"),
        (lambda meta, tensors: tensors["action.bias"].fill_(-2e18), r"action.bias holds a value of magnitude 2e\+18, above"),
        (set_field("lookahead_temperature", 5e-324), r"lookahead_temperature must be a number > 0, from 0.001 to 1000, got 5e-3"),
        (set_field("lookahead_temperature", 1e-4), "lookahead_temperature must be a number > 0, from 0.001"),
        (set_field("lookahead_temperature", 1e300), "lookahead_temperature must be a number > 0, from 0.001"),
        (set_field("lookahead_temperature", float("nan")), "lookahead_temperature must be a number > 0, from 0.001"),
        (set_field("lookahead_temperature", True), "lookahead_temperature must be a number > 0, from 0.001"),
    ],
)
def test_huge_weights_and_temperatures_are_refused_in_one_line(tmp_path, change, message):
    path = tampered(tmp_path, "bad", change)
    with pytest.raises(ModelLoadError, match=message) as error:
        load_model_file(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_the_shipped_models_pass_the_overflow_probe():
    for name in ("ppo", "yahtzee", "yatzy"):
        load_model_file(model_files.Path(__file__).resolve().parents[2] / "models" / f"{name}.safetensors")


def test_at_play_time_the_model_refuses_an_overflowing_position_and_the_guard_replaces_it(overflowing, unchecked, caplog):
    encoding = make_encoding("flat", YACHT)
    fine = encoding.encode_batch(np.array([3]), np.array([2]), np.array([YACHT.all_open]))
    hands = np.array([3, 100, 200])
    observations = encoding.encode_batch(hands, np.array([2, 1, 0]), np.full(3, YACHT.all_open))
    masks = np.ones((3, 44), dtype=bool)
    raw = PPOPolicy.load(str(overflowing))
    assert raw.act_batch(fine, np.ones((1, 44), dtype=bool)).shape == (1,)  # 2 rolls left: the shipped logits
    with pytest.raises(PolicyOutputError) as error:
        raw.act_batch(observations, masks)
    assert "\n" not in str(error.value) and "tensor(" not in str(error.value) and error.value.row == 1
    guarded = make_policy(f"ppo:{overflowing}")
    np.testing.assert_array_equal(guarded.act_batch(observations, masks), make_policy(FALLBACK).act_batch(observations, masks))
    (line,) = [record.getMessage() for record in caplog.records if record.name == "agents.policies.guard"]
    dice = " ".join(map(str, YACHT.dice.hands[100]))
    assert line.startswith(f"policy ppo:{overflowing} could not choose at dice {dice}, 1 rolls left, open rows ones,")
    assert "\n" not in line and line.endswith(f"{FALLBACK} plays in its place for the rest of the game")


def test_evaluate_and_tournaments_play_on_and_name_the_model_once(overflowing, unchecked, capsys, caplog):
    from agents.evaluate import main as evaluate_main

    for argv in (["--policy", f"ppo:{overflowing}"], ["--table", f"ppo:{overflowing},greedy"]):
        caplog.clear()
        evaluate_main([*argv, "--games", "4", "--no-progress"])
        assert "Traceback" not in capsys.readouterr().err
        lines = [record.getMessage() for record in caplog.records if record.name == "agents.policies.guard"]
        assert len(lines) == 1 and lines[0].startswith(f"policy ppo:{overflowing} could not choose at dice"), lines


def test_yacht_play_vs_plays_on_with_the_agent_replaced_and_says_so_once(overflowing, unchecked, tmp_path, capsys):
    from yacht_play.records import read_records
    from yacht_play.terminal import ScriptedConsole
    from yacht_play.terminal import main as play_main

    record = tmp_path / "game.jsonl"
    argv = ["--seed", "5", "--vs", f"ppo:{overflowing}", "--record", str(record)]
    console = ScriptedConsole([f"s {row}" for row in range(1, 13)])
    assert play_main(argv, console) == 0
    said = [line for line in console.output if "could not choose" in line]
    assert len(said) == 1 and said[0].startswith(f"ppo: policy ppo:{overflowing} could not choose at dice"), said
    assert "Traceback" not in capsys.readouterr().err
    game = read_records(record).games[0]
    assert game.finished and len([d for d in game.decisions if d["points"] is not None]) == 2 * YACHT.num_turns


def test_a_table_game_never_answers_500_and_plays_on_with_the_agent_replaced(overflowing, unchecked, tmp_path):
    """Before: the first row choice answered 500 (the model's NaN logits), and every later request the same."""
    model = f"ppo:{overflowing}"
    service = GameService(db.connect(str(tmp_path / "yacht.db")), [model, "greedy"])  # the warm-up passes (2 rolls left)
    rng = random.Random(3)
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        created = client.post("/api/games", json={"name": "ann", "mode": "table", "agents": [model, "greedy"], "coach": True})
        assert created.status_code == 201, created.text
        secret = created.json()["secret"]
        view = client.get(f"/api/games/{secret}").json()
        moves = 0
        while not view["finished"]:
            current = view["current"]
            body = {"row": rng.choice(sorted(current["now"]))} if moves % 2 else {"hold": [0, 1]}
            if current["rolls_left"] == 0:
                body = {"row": rng.choice(sorted(current["now"]))}
            response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **body})
            assert response.status_code == 200, response.text
            view = response.json()
            moves += 1
            if moves == 4:  # as after a restart: rebuilt from its rows, the game still plays
                service.forget(service.live(secret))
        assert view["finished"] and len(view["winners"]) >= 1
    replaced = view["replaced"]
    assert replaced and replaced[0]["seat"] == 1 and replaced[0]["policy"] == shown_policy(model)
    assert replaced[0]["by"] == FALLBACK and str(overflowing.parent) not in str(replaced)  # no server path shown
    assert "rolls left" in replaced[0]["reason"] and "\n" not in replaced[0]["reason"]
    stored = db.load_record(service.engine, db.game_row(service.engine, secret))
    assert stored.finished and len(stored.decisions) == view["seq"]
    # Before: the report over this game answered 400 (/api/report) and 500 (/report) without naming the model.
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        document = client.get("/api/report")
        assert document.status_code == 200, document.text
        assert client.get("/report").status_code == 200
    (entry,) = [e for e in document.json()["likeness"] if e["policy"] == shown_policy(model)]
    assert entry["note"].startswith(f"policy {shown_policy(model)} gives no probabilities at dice"), entry
    assert "\n" not in entry["note"] and str(overflowing.parent) not in entry["note"]
