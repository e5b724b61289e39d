"""Inference model files: a trained policy as tensors and plain metadata, which loading cannot make run code.

A stable-baselines3 ``.zip`` unpickles parts of itself when it is loaded, so a model file from
someone else could run any code. Models that are shared, shipped or played are therefore kept as
one ``.safetensors`` file instead: the actor's weights as float32 tensors, and in the header's
``__metadata__`` under ``"yacht_model"`` a JSON object that says how to rebuild the network:

``format`` (``"yacht-model"``), ``format_version`` (2, or 3 for a Q network), ``policy`` (``"mlp"``, or
``"lookahead"`` for :mod:`agents.training.lookahead_policy`: a policy's logits; or ``"q"``: a masked DQN's action
values, :mod:`agents.training.dqn_model`), ``lookahead_temperature`` (a number for ``lookahead``, else null),
``observation_encoding`` (a name of :data:`yacht_env.encoding.ENCODINGS`), ``num_players`` (1 for a solitaire
model, 2..5 for a model that reads a table), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS`),
``rules_fingerprint`` (that rule set's ``fingerprint``, so a model is never played under rules that were changed
since it was trained), ``num_actions``,
``net_arch`` (hidden layer widths), ``activation`` (``"relu"`` or ``"tanh"``). Version 1 files,
written before models named their rule set's fingerprint, have no ``rules_fingerprint`` and play
``"yacht"``. Version 3 adds the policy ``"q"`` (a Box observation, alone or at a table); files of the other policies are
still written as version 2, which every reader since reads.

A stable-baselines3 model records its rule set as the attributes ``yacht_rules`` and
``yacht_rules_fingerprint`` (:func:`record_rules`), which its zip keeps; a zip without them is a
``"yacht"`` model. Whoever plays a model checks that its rules are the env's
(:func:`check_model_rules`): a mismatch is a :class:`ModelLoadError` naming both.

Tensors: ``policy.<i>.weight`` / ``policy.<i>.bias`` for each hidden layer ``i`` and
``action.weight`` / ``action.bias`` (a Q network's head gives one value per action). Every field, name, shape and
dtype is checked on load; anything else is a :class:`ModelLoadError` naming the file and the problem, in one
line. So are weights above ``MAX_WEIGHT``, a ``lookahead_temperature`` outside ``MIN_TEMPERATURE..MAX_TEMPERATURE``, and a network
whose logits overflow (NaN, infinite, beyond ``MAX_LOGIT``) on any of :func:`probe_positions`; a
position the probe missed still fails in play as a one-line :class:`agents.policies.policy.PolicyOutputError`.

:func:`export_model` writes a MaskablePPO or a masked DQN (in memory) in this format; :func:`load_model_file`
reads it into :class:`InferenceModel`, a small torch network that picks the same actions as the
MaskablePPO policy (the argmax of the masked logits; the same probabilities when sampling), or the DQN's (the
legal action of highest value, :mod:`agents.learned.legal_q`), with no stable-baselines3 and no unpickling. The
policy prefix that plays a file is its kind's (:data:`PLAYED_AS`): ``ppo:`` a policy, ``dqn:`` a Q network.
``python -m agents.learned.export_model`` converts a saved zip.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agents.policies.policy import PolicyOutputError, describe_position
from yacht_env.actions import ActionLayout
from yacht_env.bounded_input import InputBoundsError, check_regular_file, load_json
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import BUILT_IN_RULE_SETS, RULE_SETS, RuleSet, rule_set

FORMAT = "yacht-model"
FORMAT_VERSION = 3
Q_VERSION = 3  # the first version with policy "q"; the others are written as POLICY_VERSION, for older readers
POLICY_VERSION = 2
METADATA_KEY = "yacht_model"
SUFFIX = ".safetensors"
POLICIES = ("mlp", "lookahead", "q")
PLAYED_AS = {"mlp": "ppo:", "lookahead": "ppo:", "q": "dqn:"}  # the policy prefix that plays each kind of file
ACTIVATIONS = ("relu", "tanh")
MAX_LAYER_WIDTH = 65_536
# No file this project writes comes near it (the largest shipped one, a Yatzy plan, is 8 MB): a bigger file is refused unread.
MAX_FILE_BYTES = 256 * 2**20
# Trained weights are below 10; two layers of weights at 1e18 already multiply past float32's 3.4e38.
MAX_WEIGHT = 1e18
# Temperatures (points per logit unit) outside this range make the look-ahead's q / temperature overflow
# float32 or drown the network: 1e-3 already turns a 100-point q into 1e5 logits.
MIN_TEMPERATURE, MAX_TEMPERATURE = 1e-3, 1e3
# Illegal actions are masked at -1e8 (as sb3-contrib does): a legal logit far below that would lose to them.
MAX_LOGIT = 1e6
Q_SCALE = 50.0  # the look-ahead's points -> network inputs (agents/training/lookahead_policy.py)
ILLEGAL_INPUT = -1.0  # what the look-ahead network sees for an illegal action's q
FIELDS_V1 = (
    "format",
    "format_version",
    "policy",
    "lookahead_temperature",
    "observation_encoding",
    "num_players",
    "rules",
    "num_actions",
    "net_arch",
    "activation",
)
FIELDS = (*FIELDS_V1, "rules_fingerprint")
LEGACY_RULES = "yacht"  # the rules of every model saved before models named theirs


class ModelLoadError(ValueError):
    """A saved model is missing, unreadable or does not fit the rules; the message is one line."""


def check_temperature(temperature, what: str = "temperature") -> float:
    """``temperature`` as a float if it is a number in ``MIN_TEMPERATURE..MAX_TEMPERATURE``, else ``ValueError`` (one line)."""
    if type(temperature) not in (int, float) or not MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE:
        raise ValueError(f"{what} must be a number > 0, from {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g}, got {temperature!r}")
    return float(temperature)


# -- the rule set a model plays -------------------------------------------------------------------------


def named_rules(name, fingerprint: str | None, where: str) -> RuleSet:
    """The rule set a model file or zip names, checked: a known name, and this version's rules of that name.

    ``fingerprint`` None (a model saved before models recorded it) is taken on trust.
    """
    if not isinstance(name, str) or name not in RULE_SETS:
        raise ModelLoadError(f"{where}: rules must be one of {', '.join(RULE_SETS)}, got {name!r}")
    rules = RULE_SETS[name]
    if fingerprint is not None and fingerprint != rules.fingerprint:
        raise ModelLoadError(
            f"{where}: it was trained on {name!r} rules of fingerprint {fingerprint!r}, but {name!r} here has "
            f"fingerprint {rules.fingerprint!r}: the rules changed since, so the model does not play them"
        )
    return rules


def record_rules(model, rules: RuleSet | str) -> None:
    """Record on a stable-baselines3 model the rule set it plays (saved in its zip, exported to its model file)."""
    rules = rule_set(rules)
    named = RULE_SETS.get(rules.name)
    if named is None or named.fingerprint != rules.fingerprint:
        problem = "is not one of" if named is None else "differs from the rule set of that name in"
        raise ValueError(f"a model names its rules: rule set {rules.name!r} {problem} {', '.join(RULE_SETS)}")
    model.yacht_rules = rules.name
    model.yacht_rules_fingerprint = rules.fingerprint


def model_rules(model, where: str = "the model") -> RuleSet:
    """The rule set a model plays: an :class:`InferenceModel`'s, or what a stable-baselines3 model records.

    A model that records none plays the rules of the env it was built on when it still holds one (a
    model made in memory on ``Yatzy-v0``), the rules a look-ahead policy was built for, or else
    ``"yacht"`` (zips saved before models recorded their rules).
    """
    if isinstance(model, InferenceModel):
        return model.rules
    name = getattr(model, "yacht_rules", None)
    if name is None:
        name = _env_rules_name(model)
    if name is None:
        name = getattr(getattr(model, "policy", None), "rules_name", LEGACY_RULES)
    return named_rules(name, getattr(model, "yacht_rules_fingerprint", None), where)


def _env_rules_name(model) -> str | None:
    """The name of the rule set of the env a stable-baselines3 model holds, if it holds a Yacht env."""
    get_env = getattr(model, "get_env", None)
    env = get_env() if callable(get_env) else None
    if env is None:
        return None
    try:
        rules = env.get_attr("rules")[0]
    except (AttributeError, IndexError):
        return None
    return rules.name if isinstance(rules, RuleSet) and BUILT_IN_RULE_SETS.get(rules.name) is rules else None


def check_trained_rules(kind: str, path: str, meta: dict, rules: RuleSet) -> None:
    """``ModelLoadError`` in one line when a file's checked metadata names rules other than ``rules`` (by name or content)."""
    if meta["rules"] != rules.name or named_rules(meta["rules"], None, kind).fingerprint != rules.fingerprint:
        raise ModelLoadError(
            f"{kind} {path!r} was trained on the {meta['rules']!r} rules, but this game plays {rules.name!r}: "
            f"play it with rules {meta['rules']!r}, or train a {kind} for {rules.name!r}"
        )


def check_model_rules(model, name: str, rules: RuleSet | str | None) -> RuleSet:
    """The model's rule set if it is the env's ``rules``, else ``ModelLoadError`` naming both (one line)."""
    rules = rule_set(rules)
    own = model_rules(model, f"model {name}")
    if own.fingerprint != rules.fingerprint:
        raise ModelLoadError(
            f"model {name} was trained on the {own.name!r} rules, but this game plays {rules.name!r}: "
            f"play it with rules {own.name!r}, or train a model for {rules.name!r}"
        )
    return own


# -- the look-ahead, shared with the training policy -----------------------------------------------


def one_turn_q(turn_solution, encoding, observations: np.ndarray, num_actions: int) -> np.ndarray:
    """The one-turn look-ahead ``q`` in points, (N, num_actions); -inf where illegal or the game is over.

    ``turn_solution`` is :func:`agents.solvers.optimal.solve_myopic` of the encoding's rules. Under rules with
    a sheet state it is given the upper subtotal and the Yahtzee box read from the observation, so a
    row's ``q`` counts the bonuses that scoring it earns this turn (the upper bonus when the points
    reach the threshold, the extra-Yahtzee bonus), scores jokers at joker values and is -inf for the
    rows a forced joker closes.
    """
    sheet = encoding.rules.has_bonus_or_joker
    positions = encoding.decode_positions(observations) if sheet else encoding.decode_batch(observations)
    open_bits = positions[2]
    q = np.full((len(open_bits), num_actions), -np.inf, dtype=np.float32)
    playing = open_bits != 0
    if playing.any():
        q[playing] = turn_solution.q_values_batch(*(part[playing] for part in positions))
    return q


def lookahead_inputs(q: np.ndarray) -> np.ndarray:
    """What the look-ahead network reads of ``q``: ``q / Q_SCALE``, ``ILLEGAL_INPUT`` where illegal."""
    return np.where(np.isfinite(q), q / Q_SCALE, ILLEGAL_INPUT).astype(np.float32)


# -- observation spaces ------------------------------------------------------------------------------


def observation_space_of(encoding: str, num_players: int, rules):
    """The observation space a model of this encoding and table size reads."""
    if num_players == 1:
        return make_encoding(encoding, rules).space
    from yacht_env.table.encoding import make_table_encoding

    return make_table_encoding(encoding, num_players, rules).space


def flat_size(space) -> int:
    """Width of an observation once flattened as stable-baselines3 does (one-hot for Discrete)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return sum(flat_size(part) for part in space.spaces.values())
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    return int(np.prod(space.shape)) if space.shape else 1


def describe_space(space, rules) -> tuple[str, int]:
    """``(encoding, num_players)`` of an observation space, or ``ModelLoadError``."""
    for num_players in range(1, MAX_PLAYERS + 1):
        for name in ENCODINGS:
            if observation_space_of(name, num_players, rules) == space:
                return name, num_players
    raise ModelLoadError(
        f"the model's observation space {space} matches no encoding of {', '.join(ENCODINGS)} at tables of 1-{MAX_PLAYERS}"
    )


# -- export --------------------------------------------------------------------------------------------


def network_tensors(layers: list, activation_fn, head) -> tuple[dict, str]:
    """``(tensors, activation)`` of an MLP given as its hidden ``layers`` (Linear and ``activation_fn`` in turn) and
    its ``head`` (Linear), as float32 copies under the file's names; ``ValueError`` if it is not such an MLP.
    """
    import torch

    activation = {torch.nn.ReLU: "relu", torch.nn.Tanh: "tanh"}.get(activation_fn)
    if activation is None:
        raise ValueError(f"cannot export activation {activation_fn}; expected ReLU or Tanh")
    linears = layers[0::2]
    if (
        not all(isinstance(layer, torch.nn.Linear) for layer in [*linears, head])
        or not all(isinstance(layer, activation_fn) for layer in layers[1::2])
        or len(layers) != 2 * len(linears)
    ):
        raise ValueError("cannot export the network: expected Linear and activation layers in turn")
    tensors = {}
    for name, layer in [*((f"policy.{i}", layer) for i, layer in enumerate(linears)), ("action", head)]:
        tensors[f"{name}.weight"] = layer.weight.detach().to(torch.float32).contiguous().clone()
        tensors[f"{name}.bias"] = layer.bias.detach().to(torch.float32).contiguous().clone()
    return tensors, activation


def file_metadata(
    kind: str, tensors: dict, activation: str, observation_space, rules: RuleSet, num_actions: int, temperature=None
):
    """The metadata of a model file of policy ``kind`` whose network is ``tensors``, reading ``observation_space``."""
    encoding, num_players = describe_space(observation_space, rules)
    hidden = len(tensors) // 2 - 1
    return {
        "format": FORMAT,
        "format_version": Q_VERSION if kind == "q" else POLICY_VERSION,
        "policy": kind,
        "lookahead_temperature": temperature,
        "observation_encoding": encoding,
        "num_players": num_players,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "num_actions": int(num_actions),
        "net_arch": [int(tensors[f"policy.{i}.bias"].shape[0]) for i in range(hidden)],
        "activation": activation,
    }


def model_metadata(model) -> tuple[dict, dict]:
    """The metadata and network tensors of an in-memory MaskablePPO (its actor) or masked DQN (its online Q network);
    ``ValueError`` if it has another shape.
    """
    rules = model_rules(model)
    policy = model.policy
    if hasattr(model, "q_net"):  # a DQN: its observation holds the legal actions beside what the network reads
        q_net = model.q_net
        layers = list(q_net.q_net)
        tensors, activation = network_tensors(layers[:-1], q_net.activation_fn, layers[-1])
        return file_metadata("q", tensors, activation, q_net.observation_space, rules, model.action_space.n), tensors
    kind = "lookahead" if type(policy).__name__ == "LookaheadPolicy" else "mlp"
    if kind == "mlp" and type(policy.features_extractor).__name__ not in ("FlattenExtractor", "CombinedExtractor"):
        raise ValueError(f"cannot export a policy with features extractor {type(policy.features_extractor).__name__}")
    tensors, activation = network_tensors(list(policy.mlp_extractor.policy_net), policy.activation_fn, policy.action_net)
    temperature = float(policy.temperature) if kind == "lookahead" else None
    return file_metadata(kind, tensors, activation, model.observation_space, rules, model.action_space.n, temperature), tensors


def export_model(model, path: str | Path) -> Path:
    """Write a MaskablePPO or masked DQN model (in memory) as an inference model file, atomically; return the path."""
    metadata, tensors = model_metadata(model)
    return write_safetensors(path, tensors, METADATA_KEY, metadata)


def write_safetensors(path: str | Path, tensors: dict, key: str, metadata: dict) -> Path:
    """``tensors`` and ``metadata`` (as JSON under ``key``) as one safetensors file, written atomically; the path."""
    from safetensors.torch import save

    from yacht_env.atomic_files import write_atomically

    data = save(tensors, metadata={key: json.dumps(metadata)})
    path = Path(path)
    write_atomically(path, lambda handle: handle.write(data))
    return path


# -- load ----------------------------------------------------------------------------------------------


def check_header(meta, where: str, file_format: str, current_version: int, fields_of) -> int:
    """The checks every yacht-rl file's metadata gets: a JSON object, its ``format_version`` (1 to
    ``current_version``), exactly the fields ``fields_of(version)`` and its ``format``; returns the version.
    """

    def fail(problem: str):
        raise ModelLoadError(f"{where}: {problem}")

    if not isinstance(meta, dict):
        fail("the metadata must be a JSON object")
    version = meta.get("format_version")
    if type(version) is not int or version < 1:
        fail(f"format_version must be a positive integer, got {version!r}")
    if version > current_version:
        fail(f"format_version {version} is newer than this version reads ({current_version}); upgrade yacht-rl")
    fields = fields_of(version)
    missing = [name for name in fields if name not in meta]
    if missing:
        fail(f"metadata lacks {', '.join(missing)}")
    unknown = sorted(set(meta) - set(fields))
    if unknown:
        fail(f"unknown metadata field(s) {', '.join(map(repr, unknown))}")
    if meta["format"] != file_format:
        fail(f"format is {meta['format']!r}, expected {file_format!r}")
    return version


def _check_metadata(meta, where: str) -> dict:
    def fail(problem: str):
        raise ModelLoadError(f"{where}: {problem}")

    version = check_header(meta, where, FORMAT, FORMAT_VERSION, lambda v: FIELDS_V1 if v == 1 else FIELDS)
    if meta["policy"] not in POLICIES:
        fail(f"policy must be one of {', '.join(POLICIES)}, got {meta['policy']!r}")
    temperature = meta["lookahead_temperature"]
    if meta["policy"] == "lookahead":
        try:
            check_temperature(temperature, "lookahead_temperature")
        except ValueError as error:
            fail(str(error))
    elif temperature is not None:
        fail(f"lookahead_temperature must be null for policy {meta['policy']!r}, got {temperature!r}")
    if meta["policy"] == "q" and version < Q_VERSION:
        fail(f"policy 'q' needs format_version {Q_VERSION} or later, got {version}")
    if meta["observation_encoding"] not in ENCODINGS:
        fail(f"observation_encoding must be one of {', '.join(ENCODINGS)}, got {meta['observation_encoding']!r}")
    players = meta["num_players"]
    if type(players) is not int or not 1 <= players <= MAX_PLAYERS:
        fail(f"num_players must be an integer 1..{MAX_PLAYERS}, got {players!r}")
    if meta["policy"] == "lookahead" and (players != 1 or meta["observation_encoding"] == "dict"):
        fail("a lookahead policy reads a solitaire Box observation: num_players 1 and an encoding other than dict")
    if meta["policy"] == "q" and meta["observation_encoding"] == "dict":
        fail("a q policy reads a Box observation: an encoding other than dict")
    if version == 1 and meta["rules"] != LEGACY_RULES:
        fail(f"rules must be {LEGACY_RULES!r} in a format_version 1 file, got {meta['rules']!r}")
    fingerprint = meta.get("rules_fingerprint")
    if version > 1 and not isinstance(fingerprint, str):
        fail(f"rules_fingerprint must be a string, got {fingerprint!r}")
    named_rules(meta["rules"], fingerprint, where)
    if type(meta["num_actions"]) is not int:
        fail(f"num_actions must be an integer, got {meta['num_actions']!r}")
    arch = meta["net_arch"]
    if not isinstance(arch, list) or not arch or any(type(w) is not int or not 1 <= w <= MAX_LAYER_WIDTH for w in arch):
        fail(f"net_arch must be a non-empty list of layer widths 1..{MAX_LAYER_WIDTH}, got {arch!r}")
    if meta["activation"] not in ACTIVATIONS:
        fail(f"activation must be one of {', '.join(ACTIVATIONS)}, got {meta['activation']!r}")
    return meta


def read_safetensors(path: Path, where: str, key: str, kind: str) -> tuple:
    """``(metadata, tensors)`` of a safetensors file: the JSON under ``key`` read with bounds (not yet checked).

    ``ModelLoadError`` in one line if it is not such a file (``kind`` names what it should be), if it is larger
    than ``MAX_FILE_BYTES`` (nothing is read of it then), or if the JSON is bad.
    """
    from safetensors import SafetensorError, safe_open

    try:
        size = check_regular_file(path)
    except InputBoundsError:
        raise ModelLoadError(f"{where} is not a regular file (a folder, FIFO or device): not read") from None
    except OSError as error:
        raise ModelLoadError(f"{where} cannot be read: {error.strerror or error}") from None
    if size > MAX_FILE_BYTES:
        raise ModelLoadError(f"{where} is {size:,} bytes, more than a {kind} may be ({MAX_FILE_BYTES:,}): not read")

    try:
        with safe_open(str(path), framework="pt") as handle:
            raw = (handle.metadata() or {}).get(key)
            tensors = {name: handle.get_tensor(name) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError, MemoryError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelLoadError(f"{where} is not a readable {SUFFIX} {kind} ({detail})") from None
    if raw is None:
        raise ModelLoadError(f"{where} has no {key!r} metadata: not a yacht-rl {kind}")
    try:
        return load_json(raw, f"{where}: the {key!r} metadata"), tensors
    except InputBoundsError as error:
        raise ModelLoadError(str(error)) from None
    except ValueError:
        raise ModelLoadError(f"{where}: the {key!r} metadata is not JSON") from None


def read_model_file(path: str | Path) -> tuple[dict, dict]:
    """The checked metadata and tensors of an inference model file; ``ModelLoadError`` (one line) if anything is off."""
    import torch

    path = Path(path)
    where = f"model {str(path)!r}"
    if not path.is_file():
        raise ModelLoadError(
            f"no model file at {str(path)!r}: expected a {SUFFIX} file written by train.py or agents.learned.export_model"
        )
    with open(path, "rb") as handle:
        if handle.read(2) == b"PK":
            raise ModelLoadError(
                f"{where} is a stable-baselines3 zip, which runs code when loaded: convert it with "
                f"python -m agents.learned.export_model {path} OUT{SUFFIX}, or play it as ppo-zip:{path} if you trust its source"
            )
    raw, tensors = read_safetensors(path, where, METADATA_KEY, "model file")
    meta = _check_metadata(raw, where)
    rules = rule_set(meta["rules"])
    expected_actions = ActionLayout(rules).num_actions
    if meta["num_actions"] != expected_actions:
        raise ModelLoadError(f"{where}: num_actions is {meta['num_actions']}, the {meta['rules']} rules have {expected_actions}")
    space = observation_space_of(meta["observation_encoding"], meta["num_players"], rules)
    width = flat_size(space) + (expected_actions if meta["policy"] == "lookahead" else 0)
    shapes: dict[str, tuple[int, ...]] = {}
    for i, out in enumerate(meta["net_arch"]):
        shapes[f"policy.{i}.weight"], shapes[f"policy.{i}.bias"] = (out, width), (out,)
        width = out
    shapes["action.weight"], shapes["action.bias"] = (expected_actions, width), (expected_actions,)
    if set(tensors) != set(shapes):
        missing, extra = sorted(set(shapes) - set(tensors)), sorted(set(tensors) - set(shapes))
        raise ModelLoadError(
            f"{where}: tensors do not fit the metadata (missing {missing or 'none'}, unexpected {extra or 'none'})"
        )
    for name, shape in shapes.items():
        tensor = tensors[name]
        if tensor.dtype != torch.float32:
            raise ModelLoadError(f"{where}: tensor {name} has dtype {tensor.dtype}, expected float32")
        if tuple(tensor.shape) != shape:
            raise ModelLoadError(f"{where}: tensor {name} has shape {tuple(tensor.shape)}, expected {shape}")
        if not torch.isfinite(tensor).all():
            raise ModelLoadError(f"{where}: tensor {name} holds NaN or infinite values")
        magnitude = float(tensor.abs().max()) if tensor.numel() else 0.0
        if magnitude > MAX_WEIGHT:
            raise ModelLoadError(
                f"{where}: tensor {name} holds a value of magnitude {magnitude:.3g}, above the {MAX_WEIGHT:g} "
                f"past which float32 sums overflow: not a trained network"
            )
    return meta, tensors


def load_model_file(path: str | Path) -> "InferenceModel":
    """The network saved at ``path``, checked to give finite outputs (``ModelLoadError`` in one line if it cannot be used)."""
    meta, tensors = read_model_file(path)
    model = InferenceModel(meta, tensors)
    check_finite_outputs(model, f"model {str(Path(path))!r}")
    return model


def probe_positions(rules: RuleSet, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Positions a model is tried on when it loads: every hand at every rolls-left value, for several open-row sets
    (all open, each row alone, a few drawn at random) and, under rules with bonuses, a full sheet state too.

    Returns ``(hands, rolls_left, open_bits, upper_totals, yahtzee_full)``, each (N,).
    """
    rng = np.random.default_rng(seed)
    open_sets = [rules.all_open, *(1 << row for row in range(rules.num_rows))]
    open_sets += [int(bits) for bits in rng.integers(1, rules.all_open + 1, 6)]
    states = [(bits, 0, 0) for bits in open_sets]
    if rules.has_bonus_or_joker:  # a full sheet state only where the filled rows can hold it: upper and Yahtzee rows filled
        filled = rules.upper_bits | (1 << rules.category_names.index(rules.yahtzee_row) if rules.yahtzee_row else 0)
        lower = [1 << row for row in range(rules.num_rows) if not filled >> row & 1]
        states += [(bits, rules.bonus_threshold, int(bool(rules.yahtzee_row))) for bits in lower]
    grid = np.array(
        [
            (hand, rolls, *state)
            for hand in range(rules.dice.num_hands)
            for rolls in range(rules.rolls_per_turn)
            for state in states
        ],
        dtype=np.int64,
    )
    return tuple(grid.T)


def probe_observations(model: "InferenceModel", positions: tuple[np.ndarray, ...]):
    """``(encoding, observations)``: ``positions`` in the model's encoding; at a table, the others' totals at their highest."""
    hands, rolls_left, open_bits, upper, full = positions
    num_players = model.metadata["num_players"]
    if num_players == 1:
        encoding = make_encoding(model.metadata["observation_encoding"], model.rules)
        return encoding, encoding.encode_batch(*positions)
    from yacht_env.table.encoding import make_table_encoding, max_total

    table_encoding = make_table_encoding(model.metadata["observation_encoding"], num_players, model.rules)
    totals = np.full((len(hands), num_players), max_total(model.rules))
    table_open = np.repeat(open_bits[:, None], num_players, axis=1)
    return table_encoding, table_encoding.encode_batch(hands, rolls_left, open_bits, totals, table_open, upper, full)


def unusable_rows(logits):
    """Which rows of (N, num_actions) logits cannot be played: NaN, infinite, or beyond ``MAX_LOGIT`` (bool, (N,))."""
    import torch

    return ~(torch.isfinite(logits) & (logits.abs() <= MAX_LOGIT)).all(dim=1)


def check_finite_outputs(model: "InferenceModel", where: str) -> None:
    """``ModelLoadError`` naming a position where the model's logits are NaN or infinite (float32 overflow), one line.

    A file's weights can be finite and still overflow on some inputs only (a huge weight read only when no roll
    is left): the checks of each tensor pass, and the model would fail in the middle of someone's game.
    """
    encoding, observations = probe_observations(model, probe_positions(model.rules))
    logits = model.logits(observations)
    bad = np.flatnonzero(unusable_rows(logits).numpy())
    if len(bad):
        raise ModelLoadError(
            f"{where}: its outputs overflow (NaN, infinite or beyond {MAX_LOGIT:g}) at {len(bad)} of {len(logits)} "
            f"test positions "
            f"(first: {describe_position(encoding, observations, int(bad[0]))}): not a usable network"
        )


class InferenceModel:
    """A saved policy network, played in torch: ``predict`` as MaskablePPO's, with no stable-baselines3; or a saved Q
    network (``values_actions``), whose ``predict`` is the legal action of highest value and which gives no probabilities.

    ``observation_space`` and ``action_space`` are those of the env the model was trained in, so the
    policies of :mod:`agents.learned.ppo` and :mod:`agents.learned.table_policy` play it as they would the SB3 model.
    """

    def __init__(self, metadata: dict, tensors: dict):
        import torch
        from gymnasium import spaces

        self.metadata = metadata
        self.rules = rules = rule_set(metadata["rules"])
        self.observation_space = observation_space_of(metadata["observation_encoding"], metadata["num_players"], rules)
        self.action_space = spaces.Discrete(metadata["num_actions"])
        self.activation = {"relu": torch.relu, "tanh": torch.tanh}[metadata["activation"]]
        self.hidden = [(tensors[f"policy.{i}.weight"], tensors[f"policy.{i}.bias"]) for i in range(len(metadata["net_arch"]))]
        self.head = (tensors["action.weight"], tensors["action.bias"])
        self.lookahead = metadata["policy"] == "lookahead"
        self.values_actions = metadata["policy"] == "q"
        if self.lookahead:
            from agents.solvers.optimal import solve_myopic

            self.temperature = float(metadata["lookahead_temperature"])
            self.encoding = make_encoding(metadata["observation_encoding"], rules)
            self.turn = solve_myopic(rules)

    def features(self, observations):
        """The network's input, flattened as stable-baselines3 does (float, one-hot for Discrete)."""
        import torch
        from gymnasium import spaces

        def flatten(space, values):
            values = torch.as_tensor(np.asarray(values))
            if isinstance(space, spaces.Discrete):
                return torch.nn.functional.one_hot(values.long().reshape(-1), num_classes=int(space.n)).float()
            return values.float().reshape(values.shape[0] if values.dim() else 1, -1)

        if isinstance(self.observation_space, spaces.Dict):
            return torch.cat([flatten(space, observations[key]) for key, space in self.observation_space.spaces.items()], dim=1)
        features = flatten(self.observation_space, observations)
        if self.lookahead:
            q = one_turn_q(self.turn, self.encoding, np.asarray(observations), self.action_space.n)
            features = torch.cat([features, torch.as_tensor(lookahead_inputs(q))], dim=1)
        return features

    def logits(self, observations):
        """The network's outputs before masking, (N, num_actions): action logits, or a Q network's action values."""
        import torch

        with torch.no_grad():
            features = self.features(observations)
            latent = features
            for weight, bias in self.hidden:
                latent = self.activation(torch.nn.functional.linear(latent, weight, bias))
            logits = torch.nn.functional.linear(latent, *self.head)
            if self.lookahead:
                logits = logits + features[:, -self.action_space.n :] * (Q_SCALE / self.temperature)
            return logits

    def usable_outputs(self, observations):
        """:meth:`logits`, or ``PolicyOutputError`` (one line, naming the row) where they are NaN, infinite or too large."""
        import torch

        raw = self.logits(observations)
        unusable = unusable_rows(raw)
        if unusable.any():  # torch would refuse these with a dump of the tensor, or argmax would pick an illegal action
            raise PolicyOutputError(
                f"the network's outputs overflow (NaN, infinite or beyond {MAX_LOGIT:g})", row=int(torch.nonzero(unusable)[0, 0])
            )
        return raw

    def distribution(self, observations, action_masks):
        """The masked categorical distribution, exactly as sb3-contrib's MaskableCategorical builds it."""
        import torch

        if self.values_actions:
            raise ValueError("a Q network gives action values, not a distribution over actions")
        raw = self.usable_outputs(observations)
        logits = torch.distributions.Categorical(logits=raw).logits  # normalized first, as there
        masks = torch.as_tensor(np.asarray(action_masks) != 0, dtype=torch.bool).reshape(logits.shape)
        masked = torch.where(masks, logits, torch.tensor(-1e8, dtype=logits.dtype))
        return torch.distributions.Categorical(logits=masked)

    def action_probabilities(self, observations, action_masks) -> np.ndarray:
        """The action probabilities, shape (N, num_actions), with illegal actions at (near) zero."""
        return self.distribution(observations, action_masks).probs.numpy()

    def predict(self, observations, action_masks=None, deterministic: bool = True):
        """Actions for a batch, as ``MaskablePPO.predict``: ``(actions, None)``."""
        import torch

        if action_masks is None:
            count = len(next(iter(observations.values()))) if isinstance(observations, dict) else len(observations)
            action_masks = np.ones((count, self.action_space.n), dtype=bool)
        with torch.no_grad():
            if self.values_actions:  # greedy, sampling or not: a DQN's exploration belongs to its training
                from agents.learned.legal_q import greedy_actions

                masks = torch.as_tensor(np.asarray(action_masks) != 0).reshape(-1, int(self.action_space.n))
                return greedy_actions(self.usable_outputs(observations), masks).numpy().astype(np.int64), None
            distribution = self.distribution(observations, action_masks)
            actions = torch.argmax(distribution.probs, dim=1) if deterministic else distribution.sample()
        return actions.numpy().astype(np.int64), None
