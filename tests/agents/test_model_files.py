"""Inference model files: exported models choose the SB3 policy's actions; loading never runs code from a file."""

import base64
import json
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium.spaces import Discrete

from agents.learned.model_files import (
    METADATA_KEY,
    ModelLoadError,
    export_model,
    flat_size,
    load_model_file,
    observation_space_of,
    probe_positions,
)
from agents.learned.ppo import PPOPolicy, encoding_of, model_path
from agents.registry import make_policy
from yacht_env.actions import legal_masks
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RULE_SETS, YACHT
from yacht_env.table.encoding import make_table_encoding

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_ZIP = ROOT / "models" / "ppo.zip"
SHIPPED = ROOT / "models" / "ppo.safetensors"


def random_positions(count: int, seed: int):
    """Positions anywhere in a game: hands, rolls left, non-empty open sets, and their legal masks."""
    rng = np.random.default_rng(seed)
    hands = rng.integers(0, YACHT.dice.num_hands, count)
    rolls_left = rng.integers(0, YACHT.rolls_per_turn, count)
    open_bits = rng.integers(1, 2**YACHT.num_rows, count)
    masks = legal_masks(YACHT)[(rolls_left > 0).astype(int), open_bits]
    return hands, rolls_left, open_bits, masks


def fresh_model(encoding: str, policy: str = "mlp", activation=torch.nn.Tanh, seed: int = 0):
    """A MaskablePPO with its actor nudged off its initialization (a fresh one plays near-uniform logits)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    kwargs = {"net_arch": [48, 32], "activation_fn": activation}
    if policy == "lookahead":
        from agents.training.lookahead_policy import LookaheadPolicy

        policy_class = LookaheadPolicy
        kwargs.update(temperature=0.7, encoding=encoding)
    else:
        policy_class = "MultiInputPolicy" if encoding == "dict" else "MlpPolicy"
    env = gym.make("Yacht-v0", observation_encoding=encoding)
    model = MaskablePPO(policy_class, env, n_steps=32, batch_size=32, seed=seed, device="cpu", policy_kwargs=kwargs)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.policy.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.3)
    return model


def assert_same_choices(sb3_model, exported, encoding: str, count: int = 3000, seed: int = 1):
    hands, rolls_left, open_bits, masks = random_positions(count, seed)
    observations = make_encoding(encoding, YACHT).encode_batch(hands, rolls_left, open_bits)
    expected, _ = sb3_model.predict(observations, action_masks=masks, deterministic=True)
    actions, _ = exported.predict(observations, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(actions, expected)
    assert masks[np.arange(count), actions].all()
    obs_tensor, _ = sb3_model.policy.obs_to_tensor(observations)
    with torch.no_grad():
        probabilities = sb3_model.policy.get_distribution(obs_tensor, action_masks=masks).distribution.probs.numpy()
    np.testing.assert_array_equal(exported.action_probabilities(observations, masks), probabilities)
    return actions


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_exported_mlp_models_choose_the_sb3_actions_in_every_encoding(tmp_path, encoding):
    model = fresh_model(encoding, activation=torch.nn.ReLU if encoding == "counts" else torch.nn.Tanh)
    exported = load_model_file(export_model(model, tmp_path / "model.safetensors"))
    actions = assert_same_choices(model, exported, encoding)
    assert len(set(actions.tolist())) > 10  # the nudged network really chooses, not one action everywhere


@pytest.mark.parametrize("encoding", ["flat", "features"])
def test_exported_lookahead_models_choose_the_sb3_actions(tmp_path, encoding):
    model = fresh_model(encoding, policy="lookahead")
    exported = load_model_file(export_model(model, tmp_path / "model.safetensors"))
    assert exported.metadata["policy"] == "lookahead" and exported.metadata["lookahead_temperature"] == 0.7
    assert_same_choices(model, exported, encoding)


def test_the_shipped_model_file_is_the_shipped_zip_and_plays_its_actions():
    from agents.learned.ppo import load_sb3_model

    exported = load_model_file(SHIPPED)
    assert exported.metadata["policy"] == "lookahead" and exported.metadata["net_arch"] == [256, 256]
    assert_same_choices(load_sb3_model(str(SHIPPED_ZIP)), exported, "features", count=5000, seed=7)
    # any env encoding: the policy re-encodes for the model
    flat_policy = make_policy(f"ppo:{SHIPPED}", encoding="flat")
    hands, rolls_left, open_bits, masks = random_positions(500, 3)
    flat = make_encoding("flat", YACHT).encode_batch(hands, rolls_left, open_bits)
    features = make_encoding("features", YACHT).encode_batch(hands, rolls_left, open_bits)
    np.testing.assert_array_equal(flat_policy.act_batch(flat, masks), exported.predict(features, masks)[0])
    # loaded by its path, as by its name: the most likely legal action, not a draw
    np.testing.assert_array_equal(PPOPolicy.load(str(SHIPPED)).act_batch(flat, masks), exported.predict(features, masks)[0])


def evil_zip(path: Path, marker: Path) -> Path:
    """The shipped zip with a pickle in its data that creates ``marker`` when unpickled."""

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    with zipfile.ZipFile(SHIPPED_ZIP) as source:
        data = json.loads(source.read("data"))
        data["observation_space"][":serialized:"] = base64.b64encode(pickle.dumps(Payload())).decode()
        with zipfile.ZipFile(path, "w") as target:
            for item in source.infolist():
                target.writestr(item, json.dumps(data) if item.filename == "data" else source.read(item.filename))
    return path


@pytest.mark.parametrize("num_players", range(2, MAX_PLAYERS + 1))
def test_a_model_that_reads_a_table_is_sent_to_a_table_of_its_size(num_players):
    space = make_table_encoding("flat", num_players, YACHT).space
    table = ",".join(["mine.zip"] + ["optimal"] * (num_players - 1))
    with pytest.raises(ModelLoadError, match=rf"trained at a table of {num_players} .* --table {re.escape(table)}$"):
        encoding_of(space, YACHT, "mine.zip")
    with pytest.raises(ModelLoadError, match="matches no encoding of flat"):
        encoding_of(Discrete(3), YACHT)


def test_a_model_path_is_the_file_named_and_only_where_there_is_none_the_one_with_the_suffix(tmp_path):
    named, suffixed = tmp_path / "mine", tmp_path / "mine.zip"
    assert model_path(str(named), ".zip") == named  # neither: the name as given, for the error to name
    suffixed.write_bytes(b"")
    assert model_path(str(named), ".zip") == suffixed
    named.write_bytes(b"")
    assert model_path(str(named), ".zip") == named


def test_ppo_never_unpickles_a_model_file(tmp_path):
    """Defect 1: ``ppo:evil.zip`` unpickled the zip's data, running the payload."""
    marker = tmp_path / "marker"
    evil = evil_zip(tmp_path / "evil.zip", marker)
    disguised = tmp_path / "evil.safetensors"
    disguised.write_bytes(evil.read_bytes())
    for name in (f"ppo:{evil}", f"ppo:{disguised}"):
        with pytest.raises(ModelLoadError, match="stable-baselines3 zip, which runs code when loaded.*ppo-zip:"):
            make_policy(name)
    from agents.registry import make_opponents

    with pytest.raises(ModelLoadError, match="stable-baselines3 zip"):
        make_opponents([f"ppo:{evil}"])
    from agents.evaluate import main as evaluate_main

    with pytest.raises(SystemExit) as exit_:
        evaluate_main(["--policy", f"ppo:{evil}", "--games", "4", "--no-progress"])
    assert exit_.value.code == 2
    assert not marker.exists()
    # the payload is live: the explicit opt-in for trusted zips does run it (which is why it is opt-in)
    with pytest.raises(ModelLoadError):
        make_policy(f"ppo-zip:{evil}")
    assert marker.exists()


def tampered(tmp_path: Path, name: str, change) -> Path:
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(SHIPPED), framework="pt") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
    tensors = load_file(str(SHIPPED))
    changed = change(meta, tensors)
    if isinstance(changed, tuple):
        meta, tensors = changed
    path = tmp_path / f"{name}.safetensors"
    save_file(tensors, str(path), metadata={METADATA_KEY: meta if isinstance(meta, str) else json.dumps(meta)})
    return path


def set_field(key, value):
    def change(meta, tensors):
        meta[key] = value

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (set_field("net_arch", [256, "256"]), "net_arch must be a non-empty list"),
        (set_field("net_arch", [128, 256]), r"policy.0.weight has shape \(256, 107\), expected \(128, 107\)"),
        (set_field("num_players", True), "num_players must be an integer 1..5"),
        (set_field("lookahead_temperature", -1), "lookahead_temperature must be a number > 0"),
        (set_field("observation_encoding", "pixels"), "observation_encoding must be one of"),
        (set_field("format_version", 4), "format_version 4 is newer"),
        (lambda meta, tensors: meta.pop("rules_fingerprint") and None, "metadata lacks rules_fingerprint"),
        (set_field("rules_fingerprint", 7), "rules_fingerprint must be a string, got 7"),
        (set_field("code", "import os"), "unknown metadata field"),
        (
            lambda meta, tensors: meta.update(format_version=1, rules="yahtzee") or meta.pop("rules_fingerprint") and None,
            "rules must be 'yacht' in a format_version 1 file",
        ),
        (set_field("activation", "gelu"), "activation must be one of relu, tanh"),
        (lambda meta, tensors: ("{not json", tensors), "metadata is not JSON"),
        (
            lambda meta, tensors: tensors.update({"action.bias": tensors["action.bias"].double()}),
            "action.bias has dtype torch.float64",
        ),
        (lambda meta, tensors: [tensors.pop("policy.1.bias")] and None, r"missing \['policy.1.bias'\]"),
        (
            lambda meta, tensors: tensors.update({"policy.9.bias": tensors["action.bias"].clone()}),
            r"missing none, unexpected \['policy.9.bias'\]",
        ),
        (lambda meta, tensors: tensors.update({"action.bias": tensors["action.bias"] * float("nan")}), "NaN"),
    ],
)
def test_every_field_and_tensor_is_checked(tmp_path, change, message):
    path = tampered(tmp_path, "bad", change)
    with pytest.raises(ModelLoadError, match=message) as error:
        load_model_file(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_cut_model_files_give_one_line(tmp_path, capsys):
    """Defect 9: a model cut short gave a 27-line traceback from every command that loads it."""
    from agents.evaluate import main as evaluate_main
    from yacht_play.analyze import main as analyze_main
    from yacht_play.match import write_agent_games
    from yacht_play.terminal import ScriptedConsole
    from yacht_play.terminal import main as play_main

    record = tmp_path / "game.jsonl"
    write_agent_games(record, "greedy", games=1, seed=0)
    for source, prefix in ((SHIPPED, "ppo:"), (SHIPPED_ZIP, "ppo-zip:")):
        cut = tmp_path / f"cut{source.suffix}"
        cut.write_bytes(source.read_bytes()[:100_000])
        with pytest.raises(ModelLoadError, match="cut") as error:
            make_policy(f"{prefix}{cut}")
        assert "\n" not in str(error.value)
        name = f"{prefix}{cut}"
        commands = [
            lambda: evaluate_main(["--policy", name, "--games", "4", "--no-progress"]),
            lambda: evaluate_main(["--table", f"greedy,{name}", "--games", "4", "--no-progress"]),
            lambda: play_main(["--vs", name, "--record", str(tmp_path / "p.jsonl")], ScriptedConsole([])),
            lambda: play_main(["--duplicate", name, "--record", str(tmp_path / "p.jsonl")], ScriptedConsole([])),
            lambda: analyze_main([str(record), "--agent", name]),
        ]
        for command in commands:
            capsys.readouterr()
            try:
                code = command()
            except SystemExit as exit_:
                code = exit_.code
            err = capsys.readouterr().err
            assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and str(cut) in err, err


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("rules", RULE_SETS)
def test_the_width_read_from_a_model_file_is_the_width_stable_baselines3_flattens_to(encoding, rules):
    # the width a model file's first layer must have; a dict table encoding holds a scalar total (a Box of shape ())
    from gymnasium import spaces
    from stable_baselines3.common.torch_layers import CombinedExtractor, FlattenExtractor

    for num_players in range(1, MAX_PLAYERS + 1):
        space = observation_space_of(encoding, num_players, RULE_SETS[rules])
        extractor = CombinedExtractor(space) if isinstance(space, spaces.Dict) else FlattenExtractor(space)
        assert flat_size(space) == extractor.features_dim, (encoding, rules, num_players)


@pytest.mark.parametrize("rules", RULE_SETS)
def test_a_model_is_probed_on_every_hand_and_roll_and_under_bonuses_on_a_full_sheet_state(rules):
    rules = RULE_SETS[rules]
    hands, rolls_left, open_bits, upper, full = probe_positions(rules)
    states = set(zip(open_bits.tolist(), upper.tolist(), full.tolist(), strict=True))
    alone = {(1 << row, 0, 0) for row in range(rules.num_rows)}
    assert (rules.all_open, 0, 0) in states and alone <= states
    # a sheet whose upper rows and Yahtzee row are filled: the bonus reached, the Yahtzee box full, one other row open
    full_sheet = {
        (1 << row, rules.bonus_threshold, int(rules.yahtzee_row is not None))
        for row, name in enumerate(rules.category_names)
        if not rules.upper_bits >> row & 1 and name != rules.yahtzee_row
    }
    assert {state for state in states if state[1] or state[2]} == (full_sheet if rules.has_bonus_or_joker else set())
    assert set(zip(hands.tolist(), rolls_left.tolist(), strict=True)) == {
        (hand, rolls) for hand in range(rules.dice.num_hands) for rolls in range(rules.rolls_per_turn)
    }


@pytest.mark.parametrize("content", [(10**6).to_bytes(8, "little") + b"{}", (2).to_bytes(8, "little") + b"[]", b"\x00" * 40])
def test_a_file_safetensors_cannot_read_is_refused_with_the_libraries_reason(tmp_path, content):
    from safetensors import SafetensorError, safe_open

    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(SafetensorError) as raised:
        safe_open(str(path), framework="pt")
    reason = str(raised.value).splitlines()[0]
    with pytest.raises(ModelLoadError) as error:
        load_model_file(path)
    assert str(error.value) == f"model '{path}' is not a readable .safetensors model file ({reason})"


@pytest.mark.slow
def test_export_command_converts_a_zip(tmp_path):
    out = tmp_path / "converted.safetensors"
    result = subprocess.run(
        [sys.executable, "-m", "agents.learned.export_model", str(SHIPPED_ZIP), str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    converted, shipped = load_model_file(out), load_model_file(SHIPPED)
    assert converted.metadata == shipped.metadata and shipped.metadata["rules_fingerprint"] == YACHT.fingerprint
    for name in ("policy.0.weight", "policy.1.bias", "action.weight", "action.bias"):
        np.testing.assert_array_equal(read_tensor(out, name), read_tensor(SHIPPED, name))


def read_tensor(path: Path, name: str) -> np.ndarray:
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as handle:
        return handle.get_tensor(name)


@pytest.mark.parametrize(
    "metadata, message",
    [("[" * 200_000 + "]" * 200_000, "nested deeper than the 64 levels allowed"), ('"' + "a" * 1_100_000 + '"', "bytes of JSON")],
    ids=["nested 200,000 deep", "over a megabyte"],
)
def test_metadata_too_deep_or_too_big_is_refused_in_one_line_by_every_command(tmp_path, metadata, message, capsys):
    from agents.evaluate import main as evaluate_main
    from yacht_play.analyze import main as analyze_main
    from yacht_play.cli import main as yacht_main
    from yacht_play.match import write_agent_games
    from yacht_play.terminal import ScriptedConsole
    from yacht_play.terminal import main as play_main

    path = tampered(tmp_path, "deep", lambda meta, tensors: (metadata, tensors))
    with pytest.raises(ModelLoadError, match=message) as error:
        load_model_file(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    record = tmp_path / "game.jsonl"
    write_agent_games(record, "greedy", games=1, seed=0)
    name = f"ppo:{path}"
    commands = [
        lambda: evaluate_main(["--policy", name, "--games", "4", "--no-progress"]),
        lambda: play_main(["--vs", name, "--record", str(tmp_path / "p.jsonl")], ScriptedConsole([])),
        lambda: analyze_main([str(record), "--agent", name]),
        lambda: yacht_main(["serve", "--db", str(tmp_path / "s.db"), "--agents", name]),
    ]
    for command in commands:
        capsys.readouterr()
        try:
            code = command()
        except SystemExit as exit_:
            code = exit_.code
        err = capsys.readouterr().err
        lines = [line for line in err.strip().splitlines() if "loading agents" not in line]  # serve's progress line
        assert code == 2 and "Traceback" not in err and len(lines) == 1 and str(path) in lines[0] and message in lines[0], err
