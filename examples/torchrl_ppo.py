"""Masked PPO on ``Yacht-v0`` with TorchRL: ``GymEnv``, the ``ActionMask`` transform and ``MaskedCategorical``.

The env reports the legal actions in ``info["action_mask"]``; TorchRL reads that key into the
tensordict with an info-dict reader, the ``ActionMask`` transform masks the env's action spec (so
random exploration is legal too) and the actor samples from a ``MaskedCategorical``, so no illegal
action is ever played. The rest is TorchRL's PPO as its tutorials write it: a ``Collector``,
``GAE`` and ``ClipPPOLoss``.

    pip install "yacht-rl[torchrl]"
    python -m examples.torchrl_ppo --frames 200000
"""

from __future__ import annotations

import argparse

import torch
from tensordict.nn import TensorDictModule
from torchrl.collectors import Collector
from torchrl.data import Binary
from torchrl.envs import ActionMask, DTypeCastTransform, GymEnv, TransformedEnv, default_info_dict_reader
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import yacht_env  # noqa: F401  (registers Yacht-v0)
from yacht_env.option_values import whole_number


def make_env(seed: int = 0, **env_kwargs) -> TransformedEnv:
    """``Yacht-v0`` as a TorchRL env whose ``action_mask`` entry masks its action spec."""
    env = GymEnv("Yacht-v0", categorical_action_encoding=True, **env_kwargs)
    num_actions = env.action_spec.space.n
    # info["action_mask"] becomes a tensordict entry (TorchRL's automatic info reader cannot read the
    # env's plain-int info values, so the mask is named with its spec).
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec=[Binary(num_actions, dtype=torch.int8)]))
    env = TransformedEnv(env, DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]))
    env.append_transform(ActionMask())
    env.set_seed(seed)
    return env


def make_agent(env: TransformedEnv, hidden: int = 128) -> tuple[ProbabilisticActor, ValueOperator]:
    """A masked categorical actor and a value network, two hidden layers each."""
    num_actions = env.action_spec.space.n
    num_inputs = env.observation_spec["observation"].shape[-1]
    network = MLP(in_features=num_inputs, out_features=num_actions, num_cells=[hidden, hidden])
    logits = TensorDictModule(network, in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedCategorical,
        spec=env.action_spec,
        return_log_prob=True,
    )
    critic = ValueOperator(MLP(in_features=num_inputs, out_features=1, num_cells=[hidden, hidden]), in_keys=["observation"])
    return actor, critic


def train(frames: int, frames_per_batch: int = 1024, epochs: int = 4, minibatch: int = 256, seed: int = 0, lr: float = 3e-4):
    """PPO for ``frames`` env steps; yields each batch of collected data after its update."""
    torch.manual_seed(seed)
    env = make_env(seed)
    actor, critic = make_agent(env)
    collector = Collector(
        lambda: make_env(seed),
        actor,
        frames_per_batch=frames_per_batch,
        total_frames=frames,
        auto_register_policy_transforms=False,
    )
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=critic)
    loss_module = ClipPPOLoss(actor, critic, entropy_coeff=0.01)
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=lr)
    for data in collector:
        data["next", "reward"] = data["next", "reward"] / 50.0  # points -> about 1 per turn
        with torch.no_grad():
            advantage(data)
        flat = data.reshape(-1)
        for _ in range(epochs):
            for index in torch.randperm(flat.numel()).split(minibatch):
                losses = loss_module(flat[index])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                optimizer.step()
        yield data, actor
    collector.shutdown()


def main(argv=None):
    """``python -m examples.torchrl_ppo``: train and print the points per game of each batch of steps."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=whole_number(), default=200_000, help="env steps to train for")
    parser.add_argument("--seed", type=whole_number(), default=0)
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error(f"--frames must be positive, got {args.frames}")
    done_frames = 0
    for data, _ in train(args.frames, seed=args.seed):
        done_frames += data.numel()
        ended = data["next", "done"].squeeze(-1)
        points = data["next", "reward"].sum().item() * 50.0
        games = int(ended.sum())
        print(f"{done_frames:>8} steps  {games:>3} games ended  {points / max(games, 1):6.1f} points per game", flush=True)


if __name__ == "__main__":
    main()
