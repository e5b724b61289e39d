"""A saved model names its rule set: it plays only those rules, older files play Yacht, and a bad name is refused."""

import json
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.learned.model_files import (
    METADATA_KEY,
    ModelLoadError,
    check_model_rules,
    check_trained_rules,
    export_model,
    load_model_file,
    model_rules,
    record_rules,
)
from agents.learned.ppo import load_sb3_model
from agents.registry import make_policy, make_table_policy
from tests.training.test_lookahead_rule_sets import played_positions
from yacht_env.rules import RULE_SETS, YACHT, YAHTZEE, YAHTZEE_FORCED_JOKER, YATZY, rule_set

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "models" / "ppo.safetensors"
SHIPPED_ZIP = ROOT / "models" / "ppo.zip"


def rules_model(rules: str, policy: str = "mlp", encoding: str = "features", seed: int = 0):
    """A MaskablePPO for ``rules`` that records them, its actor nudged off its initialization."""
    from sb3_contrib import MaskablePPO

    kwargs = {"net_arch": [32, 32]}
    if policy == "lookahead":
        from agents.training.lookahead_policy import LookaheadPolicy

        policy_class = LookaheadPolicy
        kwargs.update(temperature=0.5, encoding=encoding, rules=rules)
    else:
        policy_class = "MlpPolicy"
    env = gym.make("Yacht-v0", rules=rules, observation_encoding=encoding)
    model = MaskablePPO(policy_class, env, n_steps=32, batch_size=32, seed=seed, device="cpu", policy_kwargs=kwargs)
    record_rules(model, rules)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.policy.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.3)
    return model


def one_line(error) -> str:
    text = str(error.value)
    assert "\n" not in text
    return text


# -- older files play Yacht ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def legacy_files(tmp_path_factory) -> tuple[Path, Path]:
    """The shipped Yacht model as files written before models named their rules: format 1, and a zip without them."""
    from safetensors.torch import load_file, save_file

    folder = tmp_path_factory.mktemp("legacy")
    shipped = load_model_file(SHIPPED)
    metadata = {k: v for k, v in shipped.metadata.items() if k != "rules_fingerprint"} | {"format_version": 1}
    save_file(load_file(str(SHIPPED)), str(folder / "old.safetensors"), metadata={METADATA_KEY: json.dumps(metadata)})
    zipped = load_sb3_model(str(SHIPPED_ZIP))
    del zipped.yacht_rules, zipped.yacht_rules_fingerprint
    zipped.save(folder / "old.zip")
    return folder / "old.safetensors", folder / "old.zip"


def test_the_shipped_yacht_model_names_its_rules():
    shipped = load_model_file(SHIPPED)
    assert shipped.metadata["rules"] == "yacht" and shipped.metadata["rules_fingerprint"] == YACHT.fingerprint
    assert load_sb3_model(str(SHIPPED_ZIP)).yacht_rules_fingerprint == YACHT.fingerprint


def test_model_files_that_predate_rule_names_play_yacht(legacy_files):
    old, old_zip = legacy_files
    shipped = load_model_file(old)
    assert shipped.metadata["format_version"] == 1 and "rules_fingerprint" not in shipped.metadata
    assert model_rules(shipped) is YACHT
    zipped = load_sb3_model(str(old_zip))
    assert not hasattr(zipped, "yacht_rules") and model_rules(zipped) is YACHT
    for name in (f"ppo:{old}", f"ppo-zip:{old_zip}"):
        assert make_policy(name).rules is YACHT
        assert make_policy(name, rules="yacht").rules is YACHT
        assert make_table_policy(name, 2).rules is YACHT


@pytest.mark.parametrize("rules", ["yahtzee", "yatzy", "yacht_exercism"])
def test_the_yacht_model_refuses_other_rules_naming_both(rules, legacy_files):
    old, old_zip = legacy_files
    for name in (f"ppo:{SHIPPED}", f"ppo-zip:{SHIPPED_ZIP}", f"ppo:{old}", f"ppo-zip:{old_zip}"):
        for build in (lambda: make_policy(name, rules=rule_set(rules)), lambda: make_table_policy(name, 2, rule_set(rules))):
            with pytest.raises(ModelLoadError) as error:
                build()
            text = one_line(error)
            assert f"trained on the 'yacht' rules, but this game plays {rules!r}" in text and name in text


# -- models of other rules -----------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["mlp", "lookahead"])
def test_a_yahtzee_model_file_names_its_rules_and_plays_only_them(tmp_path, policy):
    model = rules_model("yahtzee", policy)
    path = export_model(model, tmp_path / "yahtzee.safetensors")
    exported = load_model_file(path)
    assert exported.metadata["rules"] == "yahtzee" and exported.metadata["rules_fingerprint"] == YAHTZEE.fingerprint
    assert exported.metadata["format_version"] == 2 and exported.rules is YAHTZEE
    played = make_policy(f"ppo:{path}", rules=YAHTZEE, encoding="flat")
    # It plays the SB3 model's actions on positions with a sheet state (re-encoded from flat observations).
    from yacht_env.encoding import make_encoding

    positions, masks = played_positions("yahtzee", 300, seed=4)
    flat = make_encoding("flat", YAHTZEE).encode_batch(*positions)
    features = make_encoding("features", YAHTZEE).encode_batch(*positions)
    expected, _ = model.predict(features, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(played.act_batch(flat, masks), expected)
    np.testing.assert_array_equal(exported.predict(features, masks)[0], expected)
    # The forced-joker rules have the same observations and actions, but not the same rules.
    for other in ("yacht", "yahtzee_forced_joker", "yatzy"):
        with pytest.raises(ModelLoadError) as error:
            make_policy(f"ppo:{path}", rules=rule_set(other))
        assert f"trained on the 'yahtzee' rules, but this game plays {other!r}" in one_line(error)


@pytest.mark.parametrize("bonus_points", [36, 50, 100, 25])
def test_a_file_of_a_built_in_rule_set_refuses_other_rules_under_its_name(bonus_points):
    """Plan, plan2 and planN files check their rules so: the name, then what the rules are."""
    house = replace(YAHTZEE, bonus_points=bonus_points)  # named "yahtzee"; fingerprints sort either side of the real one
    assert house.name == "yahtzee" and house.fingerprint != YAHTZEE.fingerprint
    check_trained_rules("plan file", "p.safetensors", {"rules": "yahtzee"}, YAHTZEE)
    with pytest.raises(ModelLoadError, match="plan file 'p.safetensors' was trained on the 'yahtzee' rules"):
        check_trained_rules("plan file", "p.safetensors", {"rules": "yahtzee"}, house)


def test_a_yahtzee_zip_records_its_rules(tmp_path):
    model = rules_model("yatzy")
    model.save(tmp_path / "yatzy.zip")
    loaded = load_sb3_model(str(tmp_path / "yatzy.zip"))
    assert model_rules(loaded) is YATZY
    assert make_policy(f"ppo-zip:{tmp_path / 'yatzy.zip'}", rules=YATZY).rules is YATZY
    with pytest.raises(ModelLoadError, match="trained on the 'yatzy' rules, but this game plays 'yahtzee'"):
        make_policy(f"ppo-zip:{tmp_path / 'yatzy.zip'}", rules=YAHTZEE)


def test_a_model_of_a_users_own_rules_cannot_name_them():
    from dataclasses import replace

    model = rules_model("yahtzee")
    house = replace(YAHTZEE, name="house", bonus_points=50)
    with pytest.raises(ValueError, match="rule set 'house' is not one of yacht"):
        record_rules(model, house)
    with pytest.raises(ValueError, match="'yahtzee' differs from the rule set of that name"):
        record_rules(model, replace(YAHTZEE, bonus_points=50))
    # Rules equal to a named set under another name are those rules.
    assert check_model_rules(model, "ppo", replace(YAHTZEE, name="copy")) is YAHTZEE


# -- a stranger's file -----------------------------------------------------------------------------------


def rewritten(tmp_path: Path, source: Path, **changes) -> Path:
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(source), framework="pt") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
    meta.update(changes)
    path = tmp_path / "stranger.safetensors"
    save_file(load_file(str(source)), str(path), metadata={METADATA_KEY: json.dumps(meta)})
    return path


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rules": "yahtzee_house"}, "rules must be one of yacht, yacht_exercism, yahtzee, .*, got 'yahtzee_house'"),
        ({"rules": ["yahtzee"]}, r"rules must be one of .*, got \['yahtzee'\]"),
        ({"rules_fingerprint": "0" * 32}, "trained on 'yahtzee' rules of fingerprint '0000.*: the rules changed since"),
        ({"rules_fingerprint": None}, "rules_fingerprint must be a string, got None"),
        ({"rules": "yahtzee_forced_joker"}, "trained on 'yahtzee_forced_joker' rules of fingerprint 'c0e9"),
    ],
)
def test_a_strangers_file_with_bad_rules_is_refused_in_one_line(tmp_path, capsys, changes, message):
    from agents.evaluate import main as evaluate_main

    source = export_model(rules_model("yahtzee"), tmp_path / "yahtzee.safetensors")
    path = rewritten(tmp_path, source, **changes)
    with pytest.raises(ModelLoadError, match=message) as error:
        load_model_file(path)
    assert str(path) in one_line(error)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        evaluate_main(["--policy", f"ppo:{path}", "--games", "4", "--no-progress"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and str(path) in err


def test_the_command_line_refuses_a_strangers_rule_name_in_one_line(tmp_path):
    source = export_model(rules_model("yahtzee"), tmp_path / "yahtzee.safetensors")
    path = rewritten(tmp_path, source, rules="<script>")
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--policy", f"ppo:{path}", "--games", "4", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: model {str(path)!r}: rules must be one of {', '.join(RULE_SETS)}, got '<script>'"
    ]


def test_a_strangers_zip_with_a_bad_rule_name_is_refused_in_one_line(tmp_path):
    source = tmp_path / "yahtzee.zip"
    rules_model("yahtzee").save(source)
    path = tmp_path / "stranger.zip"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as target:
        for item in original.infolist():
            data = original.read(item.filename)
            if item.filename == "data":
                fields = json.loads(data)
                fields["yacht_rules"] = "yahtzee_house"
                data = json.dumps(fields)
            target.writestr(item, data)
    with pytest.raises(ModelLoadError, match="rules must be one of .*, got 'yahtzee_house'") as error:
        load_sb3_model(str(path))
    assert str(path) in one_line(error)


@pytest.mark.parametrize("name", RULE_SETS)
def test_a_model_made_in_memory_on_a_rule_sets_env_plays_that_rule_set(name):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", gym.make("Yacht-v0", rules=name), n_steps=32, batch_size=32, device="cpu")
    assert not hasattr(model, "yacht_rules") and model_rules(model) is RULE_SETS[name]


def test_every_named_rule_set_can_be_recorded():
    class Bare:
        pass

    for name, rules in RULE_SETS.items():
        model = Bare()
        record_rules(model, name)
        assert model_rules(model) is rules
    assert model_rules(Bare()) is YACHT  # nothing recorded: a model from before rules were named
    assert YAHTZEE_FORCED_JOKER.fingerprint != YAHTZEE.fingerprint
