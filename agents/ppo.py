"""Trained MaskablePPO agents behind the policy interface (``ppo:PATH``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from agents.policy import Policy
from yacht_env.encoding import ENCODINGS, make_encoding


class ModelLoadError(ValueError):
    """A saved model is missing, unreadable or does not fit the rules."""


def encoding_of(observation_space, rules) -> str:
    """The name of the encoding whose observation space is ``observation_space``."""
    for name in ENCODINGS:
        if make_encoding(name, rules).space == observation_space:
            return name
    raise ModelLoadError(f"the model's observation space {observation_space} matches no encoding of {', '.join(ENCODINGS)}")


# Playing a model needs only its network; training state (schedules) is replaced on load so that
# models stay loadable whatever code pickled their schedules.
INFERENCE_ONLY = {"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0}


def load_model(path: str):
    """The MaskablePPO model saved at ``path`` (``.zip`` optional), for playing; ``ModelLoadError`` if not."""
    file = Path(path)
    if not file.exists() and file.with_suffix(".zip").exists():
        file = file.with_suffix(".zip")
    if not file.is_file():
        raise ModelLoadError(f"no model file at {path!r}: expected a MaskablePPO .zip saved by train.py")
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ModelLoadError("loading ppo: models needs the training extras: pip install 'yacht-rl[train]'") from error
    try:
        return MaskablePPO.load(file, device="cpu", custom_objects=INFERENCE_ONLY)
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, RuntimeError, OSError, ImportError) as error:
        raise ModelLoadError(f"could not load model {str(file)!r}: the file is not a valid MaskablePPO model ({error})") from error


class PPOPolicy(Policy):
    """A MaskablePPO model; plays the most likely legal action (``deterministic=True``).

    The model may have been trained on any encoding: observations are decoded with the encoding
    of the env the policy plays in and re-encoded for the model.
    """

    def __init__(self, model, name: str = "ppo", rules=None, encoding="flat", deterministic: bool = True):
        super().__init__(rules, encoding)
        self.model = model
        self.name = name
        self.deterministic = deterministic
        self.model_encoding = make_encoding(encoding_of(model.observation_space, self.rules), self.rules)
        expected_actions = 2**self.rules.num_dice + self.rules.num_categories
        if getattr(model.action_space, "n", None) != expected_actions:
            raise ModelLoadError(f"model {name} has action space {model.action_space}, expected Discrete({expected_actions})")

    @classmethod
    def load(cls, path: str, rules=None, encoding="flat", deterministic: bool = True) -> "PPOPolicy":
        return cls(load_model(path), f"ppo:{path}", rules=rules, encoding=encoding, deterministic=deterministic)

    def act_batch(self, observations, action_masks):
        if self.model_encoding is not self.encoding:
            observations = self.model_encoding.encode_batch(*self.encoding.decode_batch(observations))
        actions, _ = self.model.predict(
            observations, action_masks=np.asarray(action_masks) != 0, deterministic=self.deterministic
        )
        return np.asarray(actions, dtype=np.int64).reshape(-1)
