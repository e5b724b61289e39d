"""The architecture: yacht_env stands alone, agents stand on it, human play on both; no import cycles."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("yacht_env", "agents", "yacht_play")
LAYER = {"yacht_env": 0, "agents": 1, "yacht_play": 2, "train": 3}  # a module imports only from its layer or below
# Within agents, by job (agents/__init__.py says the same): each part imports only from its own or those before it.
AGENTS_LAYER = {
    "solvers": 0,
    "two_player": 1,
    "policies": 2,
    "learned": 3,
    "registry": 4,
    "evaluation": 5,
    "evaluate": 6,
    "training": 7,
    "benchmark": 8,
}


def project_modules() -> dict[str, Path]:
    modules = {"train": ROOT / "train.py"}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its code (function-level imports too)."""
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from package import module`` imports the module; ``from module import name`` the module
                targets.update(
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                    for alias in node.names
                )
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def test_no_module_imports_from_a_layer_above_it():
    wrong = [
        (name, target)
        for name, targets in import_graph().items()
        for target in targets
        if LAYER[target.split(".")[0]] > LAYER[name.split(".")[0]]
    ]
    assert wrong == []


def agents_part(module: str) -> str | None:
    """The part of agents a module belongs to (``agents.solvers.optimal`` -> ``solvers``); None for the package itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "agents" and len(parts) > 1 else None


def test_every_part_of_agents_has_its_place_in_the_order():
    parts = {agents_part(name) for name in project_modules()} - {None}
    assert parts == set(AGENTS_LAYER)


def test_no_part_of_agents_imports_from_a_part_after_it():
    wrong = [
        (name, target)
        for name, targets in import_graph().items()
        for target in targets
        if agents_part(name) and agents_part(target) and AGENTS_LAYER[agents_part(target)] > AGENTS_LAYER[agents_part(name)]
    ]
    assert wrong == []


def test_each_part_of_agents_says_what_it_holds_and_may_import():
    for part in AGENTS_LAYER:
        path = ROOT / "agents" / part / "__init__.py"
        if path.exists():
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert "import" in doc, f"agents/{part}/__init__.py: its docstring says nothing of what it may import"


def test_no_module_imports_another_modules_private_names():
    modules = project_modules()
    wrong = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in modules and node.module != name:
                wrong += [(name, node.module, alias.name) for alias in node.names if alias.name.startswith("_")]
    assert wrong == []


def test_the_project_has_no_import_cycles():
    graph = import_graph()
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for target in graph[node]:
                if target == start:
                    cycles.append(path + [start])
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, path + [target]))
    assert cycles == []


PLAY_EVERY_ENV_WITHOUT_AGENTS = """
import importlib, importlib.abc, pkgutil, sys

class Unimportable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("agents", "yacht_play", "train"):
            raise ModuleNotFoundError(f"{name} is made unimportable for this test")

sys.meta_path.insert(0, Unimportable())

import gymnasium as gym
import numpy as np
import yacht_env

for module in pkgutil.walk_packages(yacht_env.__path__, "yacht_env."):
    importlib.import_module(module.name)

class FirstLegal:  # a policy object: what YachtTable-v0 takes, here without the agents package
    def __init__(self):
        self.rules = yacht_env.YACHT
        self.encoding = yacht_env.encoding.make_encoding("flat", self.rules)
    def act_batch(self, observations, masks):
        return np.asarray(masks).argmax(axis=1)
    def reset(self, seed=None):
        pass

def play(env):
    obs, info = env.reset(seed=1)
    while True:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        if terminated or truncated:
            return info["total"]

totals = [play(gym.make("Yacht-v0")), play(gym.make("YachtTable-v0", opponents=[FirstLegal(), FirstLegal()]))]
vector = gym.make_vec("Yacht-v0", num_envs=4, vectorization_mode="vector_entry_point")
obs, infos = vector.reset(seed=0)
for _ in range(60):
    obs, rewards, terminated, truncated, infos = vector.step(infos["action_mask"].argmax(axis=1))
from yacht_env import yacht_v0
table = yacht_v0.env(num_players=3)
table.reset(seed=0)
for agent in table.agent_iter():
    observation, reward, termination, truncation, info = table.last()
    table.step(None if termination or truncation else int(observation["action_mask"].argmax()))
assert not any(name.split(".")[0] in ("agents", "yacht_play") for name in sys.modules)
print("played", totals)
"""


def test_every_env_plays_with_agents_and_human_play_unimportable():
    result = subprocess.run(
        [sys.executable, "-c", PLAY_EVERY_ENV_WITHOUT_AGENTS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("played")
