"""A masked DQN's Q network behind the policy interface: ``dqn:PATH`` plays the legal action of highest value.

The file is an inference model file of policy ``"q"`` (:mod:`agents.learned.model_files`: tensors and plain
metadata, every field and tensor checked, loading runs no code), written at the end of a ``algorithm: dqn`` run
(:mod:`agents.training.dqn_train`). ``ppo:`` refuses such a file and ``dqn:`` refuses a policy's, each naming the
prefix that plays it. The greedy choice ranges over the legal actions only (:mod:`agents.learned.legal_q`); the
policy gives no action probabilities (a Q network's values are no distribution), so a report's figures that need
them (the chance of the optimal action) are left out for it. A bare name is a file the package ships under
``agents/models/dqn/`` (none yet).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.learned.ppo import SHIPPED_MODELS, PPOPolicy, load_model, shipped_file_path

PREFIX = "dqn:"
SHIPPED_DQN = SHIPPED_MODELS / "dqn"


def dqn_file_path(path: str) -> Path:
    """The file ``dqn:PATH`` names: a shipped one for a bare name, else the path (``+ .safetensors`` when only that exists)."""
    return shipped_file_path(path, SHIPPED_DQN, PREFIX)


def load_q_model(path: str):
    """The checked Q network of the file ``dqn:PATH`` names (an :class:`agents.learned.model_files.InferenceModel`);
    ``ModelLoadError`` in one line if it is missing, bad, or a policy's file.
    """
    return load_model(path, PREFIX, dqn_file_path(path))


class DQNPolicy(PPOPolicy):
    """A Q network (in memory, or from a ``dqn:`` file); plays the legal action of highest value.

    Observations are re-encoded for the network as :class:`~agents.learned.ppo.PPOPolicy` does, and the network must
    have been trained on the env's rules (``ModelLoadError`` naming both if not).
    """

    def __init__(self, model, name: str = "dqn", rules=None, encoding="flat"):
        super().__init__(model, name, rules=rules, encoding=encoding, deterministic=True)

    @classmethod
    def load(cls, path: str, rules=None, encoding="flat", deterministic: bool = True) -> "DQNPolicy":
        """The policy of the file ``dqn:PATH`` names, named ``dqn:<path>`` (it is greedy whatever ``deterministic`` says)."""
        return cls(load_q_model(path), f"{PREFIX}{path}", rules=rules, encoding=encoding)

    @classmethod
    def load_named(cls, name: str, rules=None, encoding="flat", deterministic: bool = True) -> "DQNPolicy":
        """The policy of ``dqn:PATH``."""
        return cls.load(name[len(PREFIX) :], rules=rules, encoding=encoding)

    def action_probabilities(self, observations, action_masks) -> np.ndarray | None:
        """None: a Q network's values are no distribution over actions."""
        return None
