"""The documentation site: what its examples run, what they leave out, and what the front page and the API reference hold.

``docs/conftest.py`` executes every ``python`` and ``bash`` block of ``docs/``; the blocks marked
``notest`` are the long-running ones, listed here by page and first line: one more, or one fewer,
fails until this list says so. ``mkdocs build --strict`` (in ``.ci/run``) checks links, references
and docstrings.
"""

from __future__ import annotations

import pkgutil
import re
from importlib import import_module

from tests.docs_blocks import DOCS, ROOT, RUN, SHOWN, code_blocks, docs_pages, shell_commands

# (page, first line): training runs of minutes to hours, installs, servers and clusters that run until stopped.
LONG_RUNNING = [
    ("agents.md", "python -m agents.evaluate --table random,greedy,optimal --games 20000 --json t.json --plot t.png"),
    ("envs/rl-stacks.md", 'env = gym.wrappers.RecordVideo(gym.make("Yacht-v0", render_mode="rgb_array"), "videos/")'),
    ("envs/rl-stacks.md", "python -m examples.ppo_unmasked --out runs/unmasked"),
    ("getting-started.md", 'pip install -c constraints.txt "torch==2.13.0" -e ".[all]"'),
    ("getting-started.md", 'pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu'),
    ("getting-started.md", "python train.py --config configs/quick.yaml"),
    ("getting-started.md", 'pip install -c constraints.txt -e ".[docs]"'),
    ("index.md", 'pip install -c constraints.txt "torch==2.13.0" -e ".[all]" && python train.py --config configs/quick.yaml'),
    ("index.md", 'pip install -c constraints.txt "torch==2.13.0" -e ".[all]" && python -m pytest'),
    ("index.md", 'pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu'),
    ("leaderboard.md", "python -m agents.benchmark run --track yacht-solo-1m --config my_method.yaml --method my-method"),
    ("leaderboard.md", "OUT=docs/leaderboard/results nice -n 19 nohup tools/benchmark_baselines.sh > benchmark.log 2>&1 &"),
    ("people.md", "yacht play"),
    ("people.md", 'pip install -e ".[serve]" && yacht serve'),
    ("people.md", "yacht serve --agents random,greedy,optimal,ppo:yacht"),
    ("people.md", "yacht serve --host 127.0.0.1 --port 8080 --forwarded-allow-ips 127.0.0.1"),
    ("people.md", "yacht serve --agents optimal,ppo:yacht --db study.db"),
    ("people.md", "from yacht_play.report.tabulations import read_csv_file"),
    ("people.md", "python examples/simulated_study.py --out study/"),
    ("people.md", "yacht serve --db sim.db --agents optimal,greedy --new-games-per-minute 0 &"),
    ("playing-to-win.md", "from agents.solvers.target import solve_target, target_probabilities"),
    ("playing-to-win.md", "from agents.two_player import load_two_player, solve_two_player"),
    ("playing-to-win.md", "python -m agents.two_player --rules yacht"),
    ("playing-to-win.md", "python train.py --config configs/plan2_yacht.yaml"),
    ("playing-to-win.md", "python train.py --config configs/planN_yahtzee.yaml"),
    ("rule-sets.md", "python -m agents.evaluate --rules yahtzee --games 10000"),
    ("rule-sets.md", "python -m agents.evaluate --rules yahtzee --table optimal,greedy,random --games 6000"),
    ("scale.md", "python train.py --sweep configs/sweep_quick.yaml"),
    ("scale.md", "ray start --head --port 6379"),
    ("training.md", "python train.py --config configs/quick.yaml"),
    ("training.md", "python train.py --config configs/yahtzee_quick.yaml"),
    ("training.md", "python train.py --config configs/plan_yacht.yaml"),
    (
        "training.md",
        "python -m agents.benchmark run --track yacht-solo-20k --config configs/benchmark/dqn.yaml --method dqn --seeds 0",
    ),
]


def first_line(block) -> str:
    if block.language == "bash":
        return shell_commands(block)[0]
    return block.source.strip().splitlines()[0]


def all_blocks():
    return [block for page in docs_pages() for block in code_blocks(page)]


def test_every_code_block_is_run_or_only_shown():
    blocks = all_blocks()
    unknown = [f"{block.where} ({block.language or 'no language'})" for block in blocks if block.language not in RUN | SHOWN]
    assert not unknown, f"blocks neither run nor marked as shown (text, yaml): {unknown}"


def test_the_long_running_blocks_are_the_listed_ones():
    marked = [(str(block.path.relative_to(DOCS)), first_line(block)) for block in all_blocks() if block.long_running]
    assert marked == LONG_RUNNING, "\n".join(f"{page}: {line}" for page, line in marked)
    assert all(block.language in RUN for block in all_blocks() if block.long_running)


def test_most_examples_run():
    blocks = [block for block in all_blocks() if block.language in RUN]
    executed = [block for block in blocks if not block.long_running]
    print(f"{len(executed)} examples run, {len(blocks) - len(executed)} long-running ones listed")
    assert len(executed) >= 25 and len(executed) > len(blocks) - len(executed)


def test_the_readme_is_a_front_page_with_the_two_quickstart_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert 'pip install -c constraints.txt "torch==2.13.0" -e ".[all]" && python train.py --config configs/quick.yaml' in readme
    assert 'pip install -c constraints.txt "torch==2.13.0" -e ".[all]" && python -m pytest' in readme
    assert "mkdocs serve" in readme
    for link in re.findall(r"\]\(((?:docs|models)/[^)#]+)", readme):
        assert (ROOT / link).exists(), link


def test_the_api_reference_documents_every_public_module():
    documented = set()
    for page in (DOCS / "api").glob("*.md"):
        documented |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(), flags=re.M))
    public = set()
    for package in ("yacht_env", "agents", "yacht_play"):
        public.add(package)
        for module in pkgutil.walk_packages(import_module(package).__path__, package + "."):
            if not any(part.startswith("_") for part in module.name.split(".")):
                public.add(module.name)
    assert public - documented == set(), "modules missing from docs/api/"
    assert documented - public == set(), "docs/api/ names modules that do not exist"


def test_ci_builds_the_site_strictly():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "mkdocs build --strict" in ci


def test_every_option_is_in_the_form_material_renders():
    """```bash notest is a paragraph in Material for MkDocs (superfences): options go in braces, ```{.bash notest}."""
    bad = []
    for page in docs_pages():
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith("```") and len(line[3:].split()) > 1 and not line[3:].startswith("{"):
                bad.append(f"{page.relative_to(DOCS)}:{number}: {line}")
    assert not bad, bad


def test_the_sites_home_page_has_the_readmes_table_and_figures():
    """docs/index.md repeats the README's capabilities and key figures, with the links the site resolves."""
    readme, home = (ROOT / "README.md").read_text(), (DOCS / "index.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| ")]
    assert len(rows) >= 20
    for row in rows:
        as_the_site_links = row.replace("](docs/", "](").replace("(models/README.md)", "(model-card.md)")
        assert as_the_site_links in home, row
