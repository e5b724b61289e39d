"""Plan2 files and the one check of every planning network's layers, at each of their limits."""

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save

from agents.learned.model_files import ModelLoadError
from agents.learned.plan2_files import METADATA_KEY, check_layers, num_features, read_plan2_file, write_plan2_file
from yacht_env.rules import YACHT, rule_set

WHERE = "plan2 file 'x'"


def net(*sizes, fill=0.5):
    """Tensors of a network through layers of ``sizes`` (inputs first): weights ``fill``, biases -``fill``."""
    tensors = {}
    for i, (width, out) in enumerate(zip(sizes[:-1], sizes[1:])):
        tensors[f"layers.{i}.weight"] = torch.full((out, width), fill)
        tensors[f"layers.{i}.bias"] = torch.full((out,), -fill)
    return tensors


def refusal(tensors, width, outputs=1):
    with pytest.raises(ModelLoadError) as error:
        check_layers(tensors, width, WHERE, outputs=outputs)
    message = str(error.value)
    assert message.startswith(f"{WHERE}: ") and "\n" not in message
    return message.removeprefix(f"{WHERE}: ")


def test_the_input_is_a_0_or_1_per_row_of_each_player_and_three_more():
    assert num_features(YACHT) == 2 * 12 + 3 == 27
    assert num_features(rule_set("yatzy")) == 2 * 15 + 3


@pytest.mark.parametrize("sizes", [(5, 1), (5, 4, 1), (3, 7, 2, 1), (2,) * 8 + (1,)])
def test_layers_that_chain_from_the_inputs_to_one_logit_are_taken_as_float32_pairs(sizes):
    tensors = net(*sizes)
    layers = check_layers(tensors, sizes[0], WHERE)
    assert len(layers) == len(sizes) - 1
    for i, (weight, bias) in enumerate(layers):
        assert weight.dtype == np.float32 and bias.dtype == np.float32
        np.testing.assert_array_equal(weight, tensors[f"layers.{i}.weight"].numpy())
        np.testing.assert_array_equal(bias, tensors[f"layers.{i}.bias"].numpy())


def test_the_last_layer_gives_as_many_logits_as_asked():
    assert len(check_layers(net(4, 3, 2), 4, WHERE, outputs=2)) == 2
    assert refusal(net(4, 3, 1), 4, outputs=2) == "tensor layers.1.weight has shape (1, 3), expected (2, 3)"
    assert refusal(net(4, 3, 3), 4, outputs=2) == "tensor layers.1.weight has shape (3, 3), expected (2, 3)"
    assert refusal(net(4, 3, 2), 4) == "tensor layers.1.weight has shape (2, 3), expected (1, 3)"


def test_a_one_layer_network_s_only_layer_is_its_last():
    assert refusal(net(4, 2), 4) == "tensor layers.0.weight has shape (2, 4), expected (1, 4)"


def test_every_layer_reads_as_many_inputs_as_the_one_before_gives():
    assert refusal(net(5, 4, 1), 6) == "tensor layers.0.weight has shape (4, 5), expected (width, 6)"
    assert refusal(net(5, 4, 1), 4) == "tensor layers.0.weight has shape (4, 5), expected (width, 4)"
    unchained = {**net(5, 4, 1), "layers.1.weight": torch.zeros((1, 5))}
    assert refusal(unchained, 5) == "tensor layers.1.weight has shape (1, 5), expected (1, 4)"
    middle = {**net(5, 4, 3, 1), "layers.1.weight": torch.zeros((3, 5))}
    assert refusal(middle, 5) == "tensor layers.1.weight has shape (3, 5), expected (width, 4)"


@pytest.mark.parametrize("shape", [(4,), (4, 5, 1), (1, 4, 5)])
def test_a_weight_that_is_not_a_matrix_is_refused(shape):
    tensors = {**net(5, 4, 1), "layers.0.weight": torch.zeros(shape)}
    assert refusal(tensors, 5) == f"tensor layers.0.weight has shape {shape}, expected (width, 5)"


@pytest.mark.parametrize("count", [0, 9])
def test_a_network_of_no_layer_or_more_than_eight_is_refused(count):
    message = refusal(net(*(2,) * count, 1) if count else {}, 2)
    assert message.startswith("expected tensors layers.<i>.weight and layers.<i>.bias for i = 0 .. L-1 (L from 1 to 8), got ")


@pytest.mark.parametrize(
    "tensors, shown",
    [
        (
            {**net(5, 4, 1), "layers.2.weight": torch.zeros((1, 1))},
            "['layers.0.bias', 'layers.0.weight', 'layers.1.bias', 'layers.1.weight', 'layers.2.weight']",
        ),
        ({**net(5, 1), "layers.0.biases": torch.zeros(1)}, "['layers.0.bias', 'layers.0.biases', 'layers.0.weight']"),
        ({"layers.0.weight": torch.zeros((1, 5)), "layers.0.biases": torch.zeros(1)}, "['layers.0.biases', 'layers.0.weight']"),
        ({"layers.1.weight": torch.zeros((1, 5)), "layers.1.bias": torch.zeros(1)}, "['layers.1.bias', 'layers.1.weight']"),
        (
            {**net(5, 4, 3, 1), "extra": torch.zeros(1)},
            "['extra', 'layers.0.bias', 'layers.0.weight', 'layers.1.bias', 'layers.1.weight', 'layers.2.bias']",
        ),
    ],
)
def test_tensors_of_other_names_are_refused_showing_the_first_six(tensors, shown):
    assert refusal(tensors, 5).endswith(f"(L from 1 to 8), got {shown}")


def test_every_tensor_must_be_float32():
    for name in ("layers.0.weight", "layers.1.bias"):
        tensors = net(5, 4, 1)
        tensors[name] = tensors[name].double()
        assert refusal(tensors, 5) == f"tensor {name} has dtype torch.float64, expected float32"
    tensors = {**net(5, 4, 1), "layers.0.bias": torch.zeros(4, dtype=torch.float16)}
    assert refusal(tensors, 5) == "tensor layers.0.bias has dtype torch.float16, expected float32"


@pytest.mark.parametrize("shape", [(3,), (5,), (4, 1), ()])
def test_a_bias_of_another_size_than_its_layer_is_refused(shape):
    tensors = {**net(6, 4, 1), "layers.0.bias": torch.zeros(shape)}
    assert refusal(tensors, 6) == f"tensor layers.0.bias has shape {shape}, expected (4,)"


def test_a_layer_from_1_to_65536_wide_is_taken_and_no_wider_or_narrower():
    assert len(check_layers(net(1, 65_536, 1, fill=0.0), 1, WHERE)) == 2
    assert len(check_layers(net(3, 1, 1), 3, WHERE)) == 2
    assert refusal(net(1, 65_537, 1, fill=0.0), 1) == "layer 0 is 65,537 wide, expected 1 to 65,536"
    assert refusal(net(2, 0, 1), 2) == "layer 0 is 0 wide, expected 1 to 65,536"


@pytest.mark.parametrize("value", [1e4, -1e4])
def test_weights_up_to_ten_thousand_in_magnitude_are_taken(value):
    tensors = net(3, 2, 1)
    tensors["layers.1.weight"][0, 1] = value
    tensors["layers.0.bias"][1] = value
    assert check_layers(tensors, 3, WHERE)[1][0][0, 1] == value


@pytest.mark.parametrize("value", [1e4 + 0.5, -1e4 - 0.5, 1e30])
@pytest.mark.parametrize("name", ["layers.0.weight", "layers.1.bias"])
def test_weights_beyond_ten_thousand_in_magnitude_are_refused(value, name):
    tensors = net(3, 2, 1)
    tensors[name].view(-1)[0] = value
    assert refusal(tensors, 3) == f"tensor {name} holds a value beyond 10000 in magnitude"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("name", ["layers.1.weight", "layers.0.bias"])
def test_weights_that_are_not_finite_are_refused(value, name):
    tensors = net(3, 2, 1)
    tensors[name].view(-1)[-1] = value
    assert refusal(tensors, 3) == f"tensor {name} holds NaN or infinite values"


# -- files ------------------------------------------------------------------------------------------


def header(**changes):
    meta = {
        "format": "yacht-plan2",
        "format_version": 1,
        "rules": "yacht",
        "rules_fingerprint": YACHT.fingerprint,
        "features": 27,
        "games": 5,
    }
    meta.update(changes)
    return meta


def test_a_plan2_file_is_written_as_version_1_and_reads_back_as_written(tmp_path):
    layers = [(np.full((4, 27), 0.25), np.arange(4.0)), (np.full((1, 4), -1.5), np.array([2.0]))]
    path = write_plan2_file(tmp_path / "w.safetensors", layers, "yacht", np.int64(5))
    with safe_open(str(path), "pt") as handle:
        assert json.loads(handle.metadata()[METADATA_KEY]) == header()
        assert sorted(handle.keys()) == ["layers.0.bias", "layers.0.weight", "layers.1.bias", "layers.1.weight"]
    meta, read = read_plan2_file(path)
    assert meta == header()
    for (weight, bias), (weight2, bias2) in zip(layers, read, strict=True):
        np.testing.assert_array_equal(weight2, weight)
        np.testing.assert_array_equal(bias2, bias)


def write_raw(path, tensors, metadata):
    path.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(metadata)}))
    return path


def test_a_version_1_header_written_by_hand_reads(tmp_path):
    path = write_raw(tmp_path / "w.safetensors", net(27, 1), header())
    assert read_plan2_file(path)[0]["format_version"] == 1


@pytest.mark.parametrize("features", [26, 28, 27.0, "27", None])
def test_a_plan2_file_must_read_as_many_inputs_as_its_rules_give(tmp_path, features):
    path = write_raw(tmp_path / "w.safetensors", net(27, 1), header(features=features))
    with pytest.raises(ModelLoadError) as error:
        read_plan2_file(path)
    assert str(error.value) == f"plan2 file {str(path)!r}: features must be 27 for the yacht rules, got {features!r}"


def test_a_plan2_file_of_rules_with_a_bonus_is_refused(tmp_path):
    yatzy = rule_set("yatzy")
    header_ = header(rules="yatzy", rules_fingerprint=yatzy.fingerprint, features=num_features(yatzy))
    path = write_raw(tmp_path / "w.safetensors", net(num_features(yatzy), 1), header_)
    with pytest.raises(ModelLoadError) as error:
        read_plan2_file(path)
    assert str(error.value) == (
        f"plan2 file {str(path)!r}: rules 'yatzy' have a bonus or a joker: a plan2 file plays rules whose rows score on their own"
    )


def test_a_plan2_file_s_layers_chain_from_its_features_to_one_logit(tmp_path):
    path = write_raw(tmp_path / "w.safetensors", net(27, 2), header())
    with pytest.raises(ModelLoadError, match=r"layers.0.weight has shape \(2, 27\), expected \(1, 27\)"):
        read_plan2_file(path)
