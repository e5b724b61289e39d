"""Mutation testing of the rules, the transition, the solvers, the records and the server, with Cosmic Ray.

``python tools/mutation.py`` mutates each module of :data:`MODULES` one small change at a time and
runs the test files that cover it; a mutant the tests pass is a survivor. Every module has a
session of its own under ``.mutation/`` (a Cosmic Ray database), so a run that is stopped goes on
where it left off when started again, and each run rewrites ``.mutation/survivors.md``: the kill
rate per module and every survivor's diff. Not part of the test suite (pytest never collects it).

    python tools/mutation.py                          # every module, cheapest first, resuming
    python tools/mutation.py yacht_play/records.py    # one module
    python tools/mutation.py --retest-survivors       # survivors again, after new tests
    python tools/mutation.py --report                 # only rewrite the report
    python tools/mutation.py --restart MODULE         # start over, after the module itself changed

The mutants run in a copy of the working tree (``.mutation/tree``, refreshed at each start), never in
the checkout itself. A module with compiled code gets a fresh numba cache for every mutant (a
cached kernel that called the mutated one would otherwise keep the original); the others share one.
The solved tables live in ``.mutation/solved``: their keys hold a digest of the solver's source,
so a mutated solver solves again, and what it solved is deleted after its run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
TREE = WORK / "tree"

# Each module with the test files that cover it, cheapest first: a killed mutant stops at its first failing test.
MODULES: dict[str, tuple[str, ...]] = {
    "yacht_play/records.py": ("tests/yacht_play/test_records.py", "tests/yacht_play/test_hostile_files.py"),
    "yacht_env/encoding.py": (
        "tests/yacht_env/test_rule_set_envs.py",
        "tests/yacht_env/test_env.py",
        "tests/yacht_env/test_multiplayer.py",
        "tests/yacht_env/test_vector_env.py",
    ),
    "agents/win.py": ("tests/agents/test_target.py",),
    "agents/target.py": ("tests/agents/test_target.py", "tests/agents/test_ceiling.py", "tests/agents/test_solution_cache.py"),
    "yacht_play/report.py": ("tests/yacht_play/test_store.py", "tests/yacht_play/test_serve_population.py"),
    "yacht_env/rules.py": (
        "tests/yacht_env/test_rules.py",
        "tests/yacht_env/test_rule_sets.py",
        "tests/yacht_env/test_game.py",
        "tests/yacht_env/test_rule_set_envs.py",
        "tests/agents/test_optimal_rule_sets.py",
    ),
    "yacht_env/game.py": (
        "tests/yacht_env/test_game.py",
        "tests/yacht_env/test_env.py",
        "tests/yacht_env/test_rule_set_envs.py",
        "tests/yacht_env/test_illegal.py",
        "tests/yacht_env/test_multiplayer.py",
        "tests/yacht_env/test_rule_set_tables.py",
    ),
    "yacht_play/match.py": (
        "tests/yacht_play/test_seating.py",
        "tests/yacht_play/test_records.py",
        "tests/yacht_play/test_play.py",
        "tests/yacht_play/test_rule_set_play.py",
    ),
    "yacht_play/serve/games.py": (
        "tests/yacht_play/test_serve_api.py",
        "tests/yacht_play/test_serve_abuse.py",
        "tests/yacht_play/test_rule_set_serve.py",
    ),
    "agents/optimal.py": ("tests/agents/test_optimal.py", "tests/agents/test_optimal_rule_sets.py"),
    "agents/sheet_solver.py": ("tests/agents/test_optimal_rule_sets.py", "tests/agents/test_solution_cache.py"),
}

# Mutants left out, each with why: what is left is one mutant per kind of change at every place.
EXCLUDED_OPERATORS = (
    # Arithmetic to bitwise and back, and to the rare operators: the same places are mutated by +/-, *//, &/| already.
    r"core/ReplaceBinaryOperator_(Add|Sub|Mul|Div|FloorDiv|Mod|Pow)_(BitAnd|BitOr|BitXor|LShift|RShift|Pow|Mod)$",
    r"core/ReplaceBinaryOperator_(BitAnd|BitOr|BitXor|LShift|RShift)_(Add|Sub|Mul|Div|FloorDiv|Mod|Pow|BitXor)$",
    r"core/ReplaceBinaryOperator_(Add|Sub|Mul)_FloorDiv$",
    # ``x is 3`` for a value comparison: what it gives depends on CPython's small-integer cache, not on the code.
    r"core/ReplaceComparisonOperator_(Eq|NotEq|Lt|LtE|Gt|GtE|In|NotIn)_(Is|IsNot)$",
    # Without @njit a kernel runs the same code in Python; without @property or @dataclass nothing runs at all.
    r"core/RemoveDecorator$",
)


def slug(module: str) -> str:
    """The name of a module's session files: ``yacht_env/rules.py`` -> ``yacht_env.rules``."""
    return module.removesuffix(".py").replace("/", ".")


def check_modules(names: list[str]) -> list[str]:
    """The modules named (all of :data:`MODULES` when none), or ``SystemExit`` naming the unknown one."""
    for name in names:
        if name not in MODULES:
            raise SystemExit(f"unknown module {name!r}; expected one of {', '.join(MODULES)}")
    return names or list(MODULES)


def refresh_tree() -> None:
    """Copy the working tree's files (tracked and new, not ignored) into :data:`TREE`, fresh."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    if TREE.exists():
        shutil.rmtree(TREE)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not name.startswith(".mutation/"):
            (TREE / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, TREE / name)


def write_config(module: str) -> Path:
    """The Cosmic Ray configuration of ``module``'s session."""
    config = WORK / f"{slug(module)}.toml"
    excluded = ", ".join(f"'{pattern}'" for pattern in EXCLUDED_OPERATORS)
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        "timeout = 900.0\n"
        "excluded-modules = []\n"
        f'test-command = "{sys.executable} {ROOT / "tools" / "mutation.py"} --run-tests {module}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = [{excluded}]\n"
    )
    return config


def cosmic_ray(*args: str) -> None:
    """Run a Cosmic Ray command in the tree's copy, with the copy's code the one imported."""
    environment = dict(os.environ, PYTHONPATH=str(TREE))
    subprocess.run(list(args), cwd=TREE, env=environment, check=True)


def source_digest(module: str) -> str:
    """A digest of ``module``'s source in the tree: a session's mutants are places in exactly that source."""
    return hashlib.sha256((TREE / module).read_bytes()).hexdigest()


def run_module(module: str, retest_survivors: bool, restart: bool) -> None:
    """Mutate ``module`` and test every mutant not tested yet (or every survivor again)."""
    config, session = write_config(module), WORK / f"{slug(module)}.sqlite"
    stamp = session.with_suffix(".source")
    if restart:
        session.unlink(missing_ok=True)
    if session.exists() and stamp.exists() and stamp.read_text() != source_digest(module):
        # Cosmic Ray finds a mutant by its operator's n-th place in the file: in another source it is another change.
        raise SystemExit(f"{module} changed since its session began; start it over with --restart {module}")
    if not session.exists():
        stamp.write_text(source_digest(module))
        cosmic_ray("cosmic-ray", "init", str(config), str(session))
        cosmic_ray("cr-filter-operators", str(session), str(config))
        cosmic_ray("cr-filter-pragma", str(session))
    if subprocess.run([sys.executable, str(ROOT / "tools" / "mutation.py"), "--run-tests", module]).returncode:
        # Every mutant would count as killed: the tests must pass on the code as it is first.
        raise SystemExit(f"the tests of {module} fail without any mutant: fix them first")
    if retest_survivors:
        retest(module, session)
    else:
        cosmic_ray("cosmic-ray", "exec", str(config), str(session))


def retest(module: str, session: Path) -> None:
    """Test the survivors of ``session`` again, one by one, and keep their new results (the rest stays as it is)."""
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    config = load_config(str(WORK / f"{slug(module)}.toml"))
    survivors = [item for item, _ in module_results(module)["survived"]]
    os.chdir(TREE)  # the mutants' paths are relative to the tree
    for number, item in enumerate(survivors, 1):
        result = mutate_and_test(item.mutations, config.test_command, config.timeout)
        with use_db(str(session), WorkDB.Mode.open) as database:
            database.set_result(item.job_id, result)
        print(f"{module}: survivor {number}/{len(survivors)} {result.test_outcome}", flush=True)


def run_tests(module: str) -> int:
    """The test command of one mutant of ``module``: its test files, stopped at the first failure."""
    environment = dict(os.environ, PYTHONPATH=str(TREE), PYTHONHASHSEED="0")
    solved = WORK / "solved"
    solved.mkdir(parents=True, exist_ok=True)
    environment["YACHT_RL_CACHE_DIR"] = str(solved)
    before = set(solved.iterdir())
    compiled = "njit" in (TREE / module).read_text()
    numba_cache = tempfile.mkdtemp(prefix="numba-", dir=WORK) if compiled else str(WORK / "numba-shared")
    environment["NUMBA_CACHE_DIR"] = numba_cache
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *MODULES[module]]
    try:
        return subprocess.run(command, cwd=TREE, env=environment).returncode
    finally:
        if compiled:
            shutil.rmtree(numba_cache, ignore_errors=True)
        for path in set(solved.iterdir()) - before:  # a mutant's own tables: never read again
            path.unlink(missing_ok=True)


def module_results(module: str) -> dict[str, list]:
    """``{outcome: [(work item, result), ...]}`` of ``module``'s session: killed, survived, pending, skipped."""
    from cosmic_ray.work_db import WorkDB, use_db

    outcomes: dict[str, list] = {"killed": [], "survived": [], "pending": [], "skipped": [], "error": []}
    session = WORK / f"{slug(module)}.sqlite"
    if not session.exists():
        return outcomes
    with use_db(str(session), WorkDB.Mode.open) as database:
        for item, result in database.completed_work_items:
            if result.worker_outcome.value in ("skipped", "no-test"):
                outcomes["skipped"].append((item, result))
            elif result.worker_outcome.value != "normal":
                outcomes["error"].append((item, result))
            else:
                kind = {"killed": "killed", "survived": "survived"}.get(result.test_outcome.value, "error")
                outcomes[kind].append((item, result))
        outcomes["pending"] = [(item, None) for item in database.pending_work_items]
    return outcomes


def write_report(modules: list[str]) -> Path:
    """``.mutation/survivors.md``: each module's kill rate, then every survivor's diff."""
    lines = ["# Mutation testing", "", "| module | killed | survived | tested | kill rate | not yet run |"]
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    survivors = []
    for module in modules:
        outcomes = module_results(module)
        killed, survived = len(outcomes["killed"]), len(outcomes["survived"])
        tested = killed + survived
        rate = f"{killed / tested:.1%}" if tested else "-"
        lines.append(f"| `{module}` | {killed} | {survived} | {tested} | {rate} | {len(outcomes['pending'])} |")
        for item, result in sorted(outcomes["survived"], key=lambda pair: pair[0].mutations[0].start_pos):
            mutation = item.mutations[0]
            survivors += [f"## `{module}`:{mutation.start_pos[0]} {mutation.operator_name} ({item.job_id})", "", "```diff"]
            survivors += [result.diff.rstrip(), "```", ""]
    report = WORK / "survivors.md"
    report.write_text("\n".join(lines + ["", *survivors]) + "\n")
    return report


def main(argv=None) -> int:
    """Run the command line; see the module doc."""
    parser = argparse.ArgumentParser(prog="python tools/mutation.py", description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"modules to mutate (default all: {', '.join(MODULES)})")
    parser.add_argument("--retest-survivors", action="store_true", help="test the survivors again (after new tests)")
    parser.add_argument("--report", action="store_true", help="only rewrite .mutation/survivors.md")
    parser.add_argument("--restart", action="store_true", help="start the modules' sessions over (after the module changed)")
    parser.add_argument("--run-tests", metavar="MODULE", help=argparse.SUPPRESS)  # the test command of one mutant
    args = parser.parse_args(argv)
    if args.run_tests:
        return run_tests(check_modules([args.run_tests])[0])
    modules = check_modules(args.modules)
    WORK.mkdir(exist_ok=True)
    if not args.report:
        refresh_tree()
        for module in modules:
            run_module(module, args.retest_survivors, args.restart)
            print(f"report: {write_report(list(MODULES))}", flush=True)
    print(f"report: {write_report(list(MODULES))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
