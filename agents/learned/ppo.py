"""Trained MaskablePPO agents behind the policy interface.

``ppo:PATH`` plays an inference model file (``.safetensors``, :mod:`agents.learned.model_files`): tensors and
plain metadata, which loading cannot make run code. ``ppo-zip:PATH`` plays a stable-baselines3 zip,
which is unpickled on load and can run code from the file: only for a zip the user names and trusts.
A model plays only the rule set it was trained on: :class:`PPOPolicy` refuses another, naming both. A Q network's
file (a masked DQN's) is played as ``dqn:PATH`` (:mod:`agents.learned.dqn`), and ``ppo:`` refuses it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typing_extensions import override

from agents.learned.model_files import PLAYED_AS, SUFFIX, ModelLoadError, check_model_rules, model_rules
from agents.policies.policy import Policy, PolicyOutputError
from yacht_env.actions import ActionLayout
from yacht_env.encoding import ENCODINGS, make_encoding

PREFIX = "ppo:"  # an inference model file: safe to load from anyone
ZIP_PREFIX = "ppo-zip:"  # a stable-baselines3 zip: runs code from the file, only for files the user trusts
SHIPPED_MODELS = Path(__file__).parent.parent / "models"  # package data (agents/models/): the trained models the package ships

__all__ = [
    "ModelLoadError",
    "PPOPolicy",
    "load_model",
    "load_sb3_model",
    "load_named_model",
    "model_file_path",
    "shipped_model_names",
]


def encoding_of(observation_space, rules, model: str = "MODEL") -> str:
    """The name of the encoding whose observation space is ``observation_space``; ``ModelLoadError`` in one line if
    none is, naming the table a model trained at a table reads (it plays only there) and ``model`` (its name) there.
    """
    for name in ENCODINGS:
        if make_encoding(name, rules).space == observation_space:
            return name
    from yacht_env.game import MAX_PLAYERS
    from yacht_env.table.encoding import make_table_encoding

    for num_players in range(2, MAX_PLAYERS + 1):
        if any(make_table_encoding(name, num_players, rules).space == observation_space for name in ENCODINGS):
            table = ",".join([model] + ["optimal"] * (num_players - 1))
            raise ModelLoadError(
                f"the model was trained at a table of {num_players} (it reads the other players' scores): play it at "
                f"a table of {num_players}, e.g. python -m agents.evaluate --table {table}"
            )
    raise ModelLoadError(f"the model's observation space {observation_space} matches no encoding of {', '.join(ENCODINGS)}")


# Playing a model needs only its network; training state (schedules) is replaced on load so that
# models stay loadable whatever code pickled their schedules.
INFERENCE_ONLY = {"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0}


def model_path(path: str, suffix: str) -> Path:
    """``path`` itself, or ``path`` + ``suffix`` when only that exists."""
    file = Path(path)
    if not file.exists() and Path(path + suffix).exists():
        return Path(path + suffix)
    return file


def shipped_model_names(folder: Path = SHIPPED_MODELS) -> list[str]:
    """The names of the models the package ships in ``folder`` (for ``ppo:``: ``yacht``, ``yahtzee``, ``yatzy``)."""
    return sorted(file.stem for file in folder.glob(f"*{SUFFIX}"))


def is_shipped_name(path: str) -> bool:
    """Whether ``path`` is a bare name (no folder, no suffix): what names a shipped file rather than a path."""
    return bool(path) and "/" not in path and "\\" not in path and not Path(path).suffix and path not in (".", "..")


def shipped_file_path(path: str, folder: Path = SHIPPED_MODELS, prefix: str = PREFIX) -> Path:
    """The file that ``PREFIX + path`` names: a shipped one of ``folder`` for a bare name, else the path.

    A name with no folder and no suffix is a file the package ships, found wherever the package is
    installed; an unknown one is refused in one line listing the shipped names. Anything else is a path:
    ``path`` itself, or ``path`` + ``.safetensors`` when only that exists.
    """
    if is_shipped_name(path):
        file = folder / f"{path}{SUFFIX}"
        if not file.is_file():
            shipped = ", ".join(f"{prefix}{name}" for name in shipped_model_names(folder)) or "none"
            raise ModelLoadError(
                f"no shipped model named {path!r}: the shipped models are {shipped}; "
                f"a file of your own is named by its path, e.g. {prefix}./{path}{SUFFIX}"
            )
        return file
    return model_path(path, SUFFIX)


def model_file_path(path: str) -> Path:
    """The inference model file that ``ppo:PATH`` names (``ppo:yacht``, ``ppo:yahtzee``, ``ppo:yatzy``, or a path)."""
    return shipped_file_path(path)


def load_model(path: str, prefix: str = PREFIX, file: Path | None = None):
    """The inference model (``.safetensors``, :mod:`agents.learned.model_files`) at ``path``: loading it runs no code.

    ``path`` may also name a shipped model (``yacht``, ``yahtzee``, ``yatzy``: see :func:`model_file_path`); ``file``,
    when given, is the file ``prefix + path`` names. ``ModelLoadError`` in one line if it is missing or not such a
    file (a stable-baselines3 zip included), or if it is a kind of network that ``prefix`` does not play (a Q network
    is played by ``dqn:``, a policy by ``ppo:``).
    """
    try:
        from agents.learned.model_files import load_model_file
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ModelLoadError(
            f"loading {prefix} models needs torch and safetensors: pip install 'yacht-rl[train]' ({error})"
        ) from None
    model = load_model_file(model_file_path(path) if file is None else file)
    kind = model.metadata["policy"]
    if PLAYED_AS[kind] != prefix:
        what = "a Q network (a DQN's action values)" if kind == "q" else "a policy network"
        raise ModelLoadError(f"model {path!r} is {what}, which {prefix} does not play: play it as {PLAYED_AS[kind]}{path}")
    return model


def load_sb3_model(path: str):
    """A stable-baselines3 MaskablePPO zip, for training and for ``ppo-zip:`` names a person typed.

    Loading a zip unpickles parts of it, which can run code: call this only for files the user names
    directly (their own run's model, checkpoints, ``ppo.init_from``), never for a name read from a file.
    """
    file = model_path(path, ".zip")
    if not file.is_file():
        raise ModelLoadError(f"no model file at {path!r}: expected a MaskablePPO .zip saved by train.py")
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ModelLoadError("loading ppo-zip: models needs the training extras: pip install 'yacht-rl[train]'") from error
    try:
        model = MaskablePPO.load(file, device="cpu", custom_objects=INFERENCE_ONLY)
    except Exception as error:  # a cut or foreign zip fails in many ways inside SB3; the file is the problem
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelLoadError(f"could not load model {str(file)!r}: not a valid MaskablePPO model ({detail})") from None
    model_rules(model, f"model {str(file)!r}")  # a rule set it names must be one this version plays
    return model


def load_named_model(name: str):
    """The model of a policy name: ``ppo:PATH`` (inference file) or ``ppo-zip:PATH`` (trusted SB3 zip)."""
    if name.startswith(ZIP_PREFIX):
        return load_sb3_model(name[len(ZIP_PREFIX) :])
    return load_model(name[len(PREFIX) :])


def predict_actions(model, name: str, observations, action_masks, deterministic: bool) -> np.ndarray:
    """The model's actions, (N,) int64; ``PolicyOutputError`` in one line where its outputs are NaN.

    Whether they are legal is the guard's to check, as for every policy (:mod:`agents.policies.guard`).
    """
    masks = np.asarray(action_masks) != 0
    try:
        actions, _ = model.predict(observations, action_masks=masks, deterministic=deterministic)
    except ValueError as error:  # torch's distributions refuse NaN logits with a dump of the tensor
        if "invalid values" not in str(error):
            raise
        raise PolicyOutputError(f"model {name}'s outputs are NaN") from None
    return np.asarray(actions, dtype=np.int64).reshape(-1)


class PPOPolicy(Policy):
    """A MaskablePPO model; plays the most likely legal action (``deterministic=True``).

    The model may have been trained on any encoding: observations are decoded with the encoding
    of the env the policy plays in and re-encoded for the model. It must have been trained on the
    env's rules (``ModelLoadError`` naming both if not).
    """

    def __init__(self, model, name: str = "ppo", rules=None, encoding="flat", deterministic: bool = True):
        super().__init__(rules, encoding)
        check_model_rules(model, name, self.rules)
        self.model = model
        self.name = name
        self.deterministic = deterministic
        self.model_encoding = make_encoding(encoding_of(model.observation_space, self.rules, name), self.rules)
        expected_actions = ActionLayout(self.rules).num_actions
        if getattr(model.action_space, "n", None) != expected_actions:
            raise ModelLoadError(f"model {name} has action space {model.action_space}, expected Discrete({expected_actions})")

    @classmethod
    def load(cls, path: str, rules=None, encoding="flat", deterministic: bool = True) -> "PPOPolicy":
        """The policy of the model file at ``path``, named ``ppo:<path>``."""
        return cls(load_model(path), f"{PREFIX}{path}", rules=rules, encoding=encoding, deterministic=deterministic)

    @classmethod
    def load_named(cls, name: str, rules=None, encoding="flat", deterministic: bool = True) -> "PPOPolicy":
        """The policy of ``ppo:PATH`` or ``ppo-zip:PATH``."""
        return cls(load_named_model(name), name, rules=rules, encoding=encoding, deterministic=deterministic)

    def action_probabilities(self, observations, action_masks) -> np.ndarray | None:
        """The model's probability of each action, (N, num_actions); None for a model that does not give them."""
        if not hasattr(self.model, "action_probabilities"):
            return None
        if self.model_encoding is not self.encoding:
            observations = self.model_encoding.encode_batch(*self.encoding.decode_positions(observations))
        return np.asarray(self.model.action_probabilities(observations, action_masks), dtype=float)

    @override
    def act_batch(self, observations, action_masks):
        if self.model_encoding is not self.encoding:
            observations = self.model_encoding.encode_batch(*self.encoding.decode_positions(observations))
        return predict_actions(self.model, self.name, observations, action_masks, self.deterministic)
