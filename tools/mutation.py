"""Mutation testing of every module of the project's packages, with Cosmic Ray.

``python tools/mutation.py`` mutates each module of ``yacht_env``, ``agents`` and ``yacht_play`` (every ``.py`` file
with code: one added later is found without an edit, :func:`discover_modules`) one small change at a time and runs
the tests that reach the change; a mutant the tests pass is a survivor. Every module has a session of its own under
``.mutation/`` (a Cosmic Ray database), so a run that is stopped goes on where it left off when started again.

The sessions stay in one checkout; what they measured is kept under version control in ``tools/mutation_results.json``
(:func:`read_results`): per module the counts, the sample, the number of mutants, the digest of the source measured,
when, and each survivor's key, line, diff and what its tests said. Each time a module's session finishes, and on
``--report``, a module with a session here replaces its entry (unless the entry was measured later, elsewhere) and
every other module keeps its own, so a run in a fresh checkout or on another machine adds to the record and loses
none of it; the file is written atomically and read as a stranger's (a file of another shape stops the run in one
line naming the field). ``tools/mutation_scores.md`` (kept under version control too, so a change shows its effect)
is then built from that file alone: per module the mutants killed, equivalent, accepted and survived, the sample, the
score over the mutants that are not equivalent with its 95% Wilson interval, when it was measured, marked "(earlier
version)" where the module's source has changed since, and every survivor with its reason from
``tools/mutation_reasons.toml`` (keyed by module and by the lines the mutant changes, before and after: a reason
carries across runs while those lines stay). The survivors' diffs go to ``.mutation/survivors.md``. Not part of the
test suite (pytest never collects it).

    python tools/mutation.py                          # every module, resuming
    python tools/mutation.py yacht_play/records.py    # one module
    python tools/mutation.py --retest-survivors       # survivors again (not those explained as equivalent), after new tests
    python tools/mutation.py --retest-survivors --unexplained MODULE  # only those no reason explains yet
    python tools/mutation.py --sample 60 MODULE...    # a random sample of 60 mutants of each module, resuming
    python tools/mutation.py --report                 # only rewrite the results file and the report
    python tools/mutation.py --restart MODULE         # start over, after the module itself changed
    python tools/mutation.py --measure 20 --before M  # seconds per mutant of 20 mutants, with and without the map

Mutants that change only what Python never runs are not generated (marked skipped when a session begins): a
function's annotations under postponed annotations, a ``from __future__`` import, a docstring; nor is one that Cosmic
Ray's operator fails to make (its exception replacer on ``except (A, module.B)``).

The mutants run in a copy of the working tree (``.mutation/tree``, refreshed at each start; another
copy for a second run at once: ``YACHT_RL_MUTATION_TREE=NAME``), never in the checkout itself.

Which tests a mutant runs: a module's test files are those that import it (through its package or a test helper;
further only where none does, :func:`test_files`). They run once on the unmutated code under coverage,
each line's context named after its test (pytest-cov's ``--cov-context=test``), and that map is kept
(``<module>-<source>-<tests>.map.json``, taken again when the module, its tests or a conftest change; coverage
measures every file of the packages, so modules tested by the same files share the map one of them took on the same
tree, :func:`shared_map`).
A mutant runs the tests reaching the line it changes (see :meth:`TestMap.select`), quickest first,
stopped at the first failure, with the ``mutation`` hypothesis profile (fewer examples, always the
same ones). A mutant those tests pass then runs every test file of its module, as the map can miss
a test (coverage names only the first caller of a result kept for later): a survivor passes them
all. A test of that last stage that fails is run again alone, the mutant still in place: one that then passes failed
for the machine's sake (a browser or a database test on a busy machine), not the mutant's, and the stage runs once
more, its result counting as it comes (:func:`run_stage`). Compiled numba code is not seen by
coverage: a kernel's lines go to the tests that reach the places naming it (through the kernels that
call it), which is cheaper than taking the map with the JIT off, where a solver's tests would run for
hours. A mutant of a kernel, or of a module constant (a kernel reads it when compiled), gets a fresh
numba cache seeded with the kernels of every file the change cannot reach (neither the module nor what imports it,
:func:`seed_numba_cache`), so only those it can reach compile again; any other reuses the kernels the map's run
compiled. The solved tables live in
``.mutation/solved`` (``YACHT_RL_TEST_CACHE_DIR``, which the tests keep instead of a fresh folder per
run): their keys hold a digest of the solver's source, so a mutated solver solves again, and what it
solved is deleted after its run.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if ROOT.parent.name == ".mutation":  # the copy in a tree, run as a mutant's test command
    ROOT = ROOT.parents[1]
WORK = ROOT / ".mutation"
# Where the mutants are made: a copy of the working tree; two runs at once each need a copy of their own.
TREE = WORK / os.environ.get("YACHT_RL_MUTATION_TREE", "tree")
# Plugins a mutant's test run never uses, left unloaded (its start-up is most of a mutant's time).
UNUSED_PLUGINS = ("cacheprovider", "benchmark", "anyio", "pytest_markdown_docs", "pytest_cov")
QUIET_PLUGINS = tuple(part for name in UNUSED_PLUGINS for part in ("-p", f"no:{name}"))
# The project's packages: coverage measures them all, so a kernel is traced to the tests through its callers.
PACKAGES = ("yacht_env", "agents", "yacht_play")

# How far from a module its test files are looked for: the test files that import it (through its package or a test
# helper), further only where none does (a test of the server imports the app, which imports the pages).
TEST_DEPTH = 1
# Why a mutant is not generated: it changes only what Python never runs (see :func:`only_annotations_changed`).
NOT_GENERATED = "not generated: it changes only annotations, a __future__ import or a docstring, or is not Python"
# Why a mutant is not generated: Cosmic Ray's operator fails on the code it would change (its exception replacer on
# ``except (A, module.B)``), so there is no mutant to test. A session begun before this was known holds the worker's
# failure instead, a traceback through Cosmic Ray's ``apply_mutation``: read as the same (see :func:`cannot_be_made`).
NOT_MADE = "not generated: Cosmic Ray cannot make it (its operator fails on this code)"
REASONS = ROOT / "tools" / "mutation_reasons.toml"  # each survivor's reason, kept from run to run (see read_reasons)
SCORES = ROOT / "tools" / "mutation_scores.md"  # the report: one table per module, kept under version control
# Each module's measured outcome, kept under version control: the report is built from it (see read_results).
RESULTS = ROOT / "tools" / "mutation_results.json"
RESULTS_FORMAT = 1
COUNTS = ("killed", "survived", "sample", "mutants", "not_generated")
ENTRY_FIELDS = ("source", "measured", *COUNTS, "survivors")
SURVIVOR_FIELDS = ("key", "line", "diff", "output")
MOST_MUTANTS = 10**7  # far more than any module has: a larger count is no count of mutants
EARLIER_VERSION = "(earlier version)"
# The smallest sample a module's score stands on (or all its mutants, where it has fewer): a row short of it is marked.
SAMPLE_TARGET = 60
REASON_KINDS = ("equivalent", "accepted")


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


def dotted(relative: str) -> str:
    """A file's module name: ``agents/two_player/__init__.py`` -> ``agents.two_player``."""
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def python_files(root: Path, folders: tuple[str, ...]) -> list[str]:
    """The ``.py`` files under ``folders`` of ``root``, relative, sorted (caches and the mutation copy aside)."""
    found = []
    for folder in folders:
        for path in (root / folder).rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if "__pycache__" not in relative and not relative.startswith(".mutation/"):
                found.append(relative)
    return sorted(found)


def discover_modules(root: Path | None = None) -> list[str]:
    """Every module of the project's packages that has code to mutate: a file added later is found without an edit."""
    root = ROOT if root is None else root
    return [name for name in python_files(root, PACKAGES) if has_code(root / name)]


def has_code(path: Path) -> bool:
    """Whether a file holds a statement other than imports and docstrings (an ``__init__`` that only re-exports: no)."""
    for statement in ast.parse(path.read_text()).body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if isinstance(statement, ast.Assign) and all(getattr(t, "id", "") == "__all__" for t in statement.targets):
            continue
        return True
    return False


def imports_of(relative: str, text: str, known: dict[str, str]) -> set[str]:
    """The project files that the file ``relative`` imports (``import a.b``, ``from a import b``, ``from .b import c``)."""
    package = dotted(relative) if relative.endswith("__init__.py") else dotted(relative).rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            names |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
    return {known[name] for name in names if name in known}


@functools.cache
def test_files(module: str, root: Path | None = None) -> tuple[str, ...]:
    """The test files that may reach ``module``, nearest first: those that import it, then those that import a file
    that does, up to :data:`TEST_DEPTH` steps (further only until one is found); within a step, a file named after the
    module first (``test_skill.py`` for ``skill.py``: it kills soonest), then by name.

    Which of their tests reach which line is then measured by coverage (:func:`record_map`).
    """
    importers = importers_in(TREE if root is None else root)
    found: list[str] = []
    seen, frontier, depth = {module}, {module}, 0
    while frontier and (depth < TEST_DEPTH or not found):
        frontier = passing_through(importers, {name for current in frontier for name in importers.get(current, ())}) - seen
        seen |= frontier
        depth += 1
        stem = Path(module).stem
        found += sorted((name for name in frontier if is_test_file(name)), key=lambda name: (stem not in name, name))
    return tuple(found)


@functools.cache
def importers_in(root: Path) -> dict[str, set[str]]:
    """``{file: the files that import it}`` over the packages and the tests of ``root`` (read once per run)."""
    files = python_files(root, (*PACKAGES, "tests"))
    known = {dotted(name): name for name in files}
    importers: dict[str, set[str]] = {}
    for name in files:
        for imported in imports_of(name, (root / name).read_text(), known):
            importers.setdefault(imported, set()).add(name)
    return importers


def is_test_file(relative: str) -> bool:
    """Whether a file of the tree is a test file pytest collects (``tests/**/test_*.py``)."""
    return relative.startswith("tests/") and Path(relative).name.startswith("test_")


def passing_through(importers: dict[str, set[str]], names: set[str]) -> set[str]:
    """``names`` and, for each package ``__init__`` or test helper among them, what imports it, and so on: a step
    through a package re-exporting a module, or through a test helper, is no step further from the module.
    """
    names, stack = set(names), list(names)
    while stack:
        name = stack.pop()
        if name.endswith("__init__.py") or name.startswith("tests/") and not is_test_file(name):
            for importer in importers.get(name, ()):
                if importer not in names:
                    names.add(importer)
                    stack.append(importer)
    return names


def check_modules(names: list[str]) -> list[str]:
    """The modules named (every module of the packages when none), or ``SystemExit`` naming the one not found."""
    every = discover_modules()
    for name in names:
        if name not in every:
            raise SystemExit(f"unknown module {name!r}; expected a .py file with code under {', '.join(PACKAGES)}")
    return names or every


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


def cosmic_ray(command: str, *args: str) -> None:
    """Run a Cosmic Ray command in the tree's copy, with the copy's code the one imported.

    The command is the one installed beside this interpreter (a virtual environment's ``bin``), so the tool runs
    from a venv that is not activated; else the first on ``PATH``.
    """
    environment = dict(os.environ, PYTHONPATH=str(TREE))
    found = shutil.which(command, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        sys.exit(f"{command} is not installed beside {sys.executable} nor on PATH: pip install -e '.[mutation]'")
    subprocess.run([found, *args], cwd=TREE, env=environment, check=True)


def source_digest(module: str) -> str:
    """A digest of ``module``'s source in the tree: a session's mutants are places in exactly that source."""
    return hashlib.sha256((TREE / module).read_bytes()).hexdigest()


def tests_digest(module: str) -> str:
    """A digest of the test files of ``module`` and of every conftest: the map of a module is taken with exactly these."""
    digest = hashlib.sha256()
    for name in sorted({*test_files(module), *(str(path.relative_to(TREE)) for path in (TREE / "tests").rglob("conftest.py"))}):
        digest.update(name.encode() + b"\0" + (TREE / name).read_bytes())
    return digest.hexdigest()


def test_environment(module: str, numba_cache: Path | str) -> dict[str, str]:
    """The environment of a test run in the tree: the tree's code, the mutation hypothesis profile, own caches."""
    solved = WORK / "solved"
    solved.mkdir(parents=True, exist_ok=True)
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(TREE), str(TREE / "tools")]),
        PYTHONHASHSEED="0",
        YACHT_RL_TEST_CACHE_DIR=str(solved),
        YACHT_RL_HYPOTHESIS_PROFILE="mutation",
        NUMBA_CACHE_DIR=str(numba_cache),
    )


def pytest_runtest_logreport(report) -> None:
    """Loaded into every test run (``-p mutation``): for the map, each test phase's node id and seconds, one JSON line
    each; for a mutant, the node id of each test that fails, a line each.
    """
    target = os.environ.get("YACHT_RL_MUTATION_DURATIONS")
    if target:
        with open(target, "a") as out:
            out.write(json.dumps([report.nodeid, report.when, report.duration]) + "\n")
    failures = os.environ.get("YACHT_RL_MUTATION_FAILURES")
    if failures and report.failed:
        with open(failures, "a") as out:
            out.write(report.nodeid + "\n")


def children_cpu_seconds() -> float:
    """CPU seconds (user and system) of every child process that has ended so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_within_cpu(command: list[str], cpu_seconds: float, **options) -> int:
    """Run ``command`` and return its exit status; past ``cpu_seconds`` of CPU the system stops it (SIGXCPU).

    A mutant that loops for ever is killed by this limit whatever the machine's load: a limit on the wall clock,
    taken from a run on a busy machine, let one mutant spin for most of an hour.
    """
    limit = max(1, int(cpu_seconds))
    return subprocess.run(
        command, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (limit, limit)), **options
    ).returncode


def mutant_cpu_limit(recorded: dict) -> float:
    """CPU seconds a mutant's test run may take: four times the map's run of every test (its kernels compiled), at least
    two minutes; a map kept before CPU time was recorded gives its wall time.
    """
    return max(120.0, 4 * recorded.get("cpu_seconds", recorded["seconds"]))


def mutant_test_limit(recorded: dict) -> float:
    """Seconds one test of a mutant's run may take: four times the map's slowest test, a minute at least.

    A mutant can leave a test waiting for ever without using the CPU (a write that no worker will ever commit): the
    CPU limit never stops that, and the session's clock only after four times the map's whole run. A map kept before
    each test's seconds were recorded gives its whole run's.
    """
    slowest = max(recorded.get("durations", {}).values(), default=recorded["seconds"])
    return max(60.0, 4 * slowest)


def mutant_test_command(listing: Path, limit: float) -> list[str]:
    """The pytest command of one stage of a mutant's run: the tests named in ``listing``, stopped at the first failure,
    each failing after ``limit`` seconds (the thread method: a test blocked in a wait is stopped as well).
    """
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-m", "not slow", *QUIET_PLUGINS, "-p", "mutation"]
    return command + ["--timeout", f"{limit:.0f}", "--timeout-method", "thread", f"@{listing}"]


def run_stage(tests: list[str], listing: Path, limit: float, cpu_seconds: float, confirm: bool, **options) -> int:
    """Run one stage of a mutant's tests (:func:`mutant_test_command`) and return pytest's exit status.

    With ``confirm``, the tests that failed run again alone: if they pass, their failure was not the mutant's (a
    browser or a database test on a busy machine), and the stage runs once more, its status returned as it comes (a
    test that fails only after another of the stage fails again there). A run stopped before naming a failed test
    (a test past its limit, the CPU limit) is returned as it is. ``options`` go to :func:`subprocess.run`; its
    environment (``env``) must let pytest import this file as ``mutation``.
    """
    failures = listing.with_suffix(".failed")
    environment = dict(options.pop("env", os.environ), YACHT_RL_MUTATION_FAILURES=str(failures))

    def run(names: list[str]) -> int:
        listing.write_text("\n".join(names) + "\n")
        failures.unlink(missing_ok=True)
        return run_within_cpu(mutant_test_command(listing, limit), cpu_seconds, env=environment, **options)

    try:
        code = run(tests)
        failed = list(dict.fromkeys(failures.read_text().splitlines())) if failures.exists() else []  # an id may hold spaces
        if code in (0, 5) or not confirm or not failed:
            return code
        if run(failed) not in (0, 5):
            return code
        print(f"mutation: {', '.join(failed)} failed and passed alone: not the mutant's doing; the stage runs again", flush=True)
        return run(tests)
    finally:
        failures.unlink(missing_ok=True)


def record_map(module: str) -> dict:
    """Run ``module``'s tests once on the unmutated code and keep which test reaches which line (``<slug>.map.json``).

    Coverage.py measures every module of the project, with pytest-cov naming each line's context after the test
    (``node id|setup``, ``|run`` or ``|teardown``; the empty context is import time). The kernels run compiled,
    unseen by coverage: :class:`TestMap` maps their lines by the name of the kernel instead. The run's numba
    cache is kept as the module's shared cache, and it is also the check that the tests pass on the code as it is.
    """
    name = slug(module)
    data_file, durations_file = WORK / f"{name}.coverage", WORK / f"{name}.durations"
    rc_file, shared = WORK / f"{name}.coveragerc", WORK / f"numba-{name}"
    for stale in (data_file, durations_file):
        stale.unlink(missing_ok=True)
    shutil.rmtree(shared, ignore_errors=True)
    sources = ", ".join(str(TREE / package) for package in PACKAGES)
    rc_file.write_text(f"[run]\nsource = {sources}\n")
    environment = dict(test_environment(module, shared), YACHT_RL_MUTATION_DURATIONS=str(durations_file))
    environment["COVERAGE_FILE"] = str(data_file)
    # `--dist no` as well as `-n 0`: pytest-cov reads the addopts' `--dist loadfile` before xdist sees `-n 0`, takes
    # the run for a distributed one and leaves its test contexts to workers that never start (every line: import time).
    command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "--dist", "no", "-p", "no:cacheprovider", "-p", "mutation"]
    command += ["-m", "not slow", f"--cov-config={rc_file}", "--cov", "--cov-context=test", "--cov-report=", *test_files(module)]
    started, cpu_before = time.monotonic(), children_cpu_seconds()
    if subprocess.run(command, cwd=TREE, env=environment).returncode:
        # Every mutant would count as killed: the tests must pass on the code as it is first.
        raise SystemExit(f"the tests of {module} fail without any mutant: fix them first")
    seconds, cpu_seconds = time.monotonic() - started, children_cpu_seconds() - cpu_before

    import coverage

    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    contexts: dict[str, int] = {}
    files: dict[str, dict[str, list[int]]] = {}
    for measured in data.measured_files():
        relative = Path(measured).resolve().relative_to(TREE.resolve()).as_posix()
        lines = data.contexts_by_lineno(measured)
        files[relative] = {
            str(line): sorted(contexts.setdefault(context, len(contexts)) for context in reached)
            for line, reached in lines.items()
        }
    durations: dict[str, float] = {}
    for row in durations_file.read_text().splitlines():
        nodeid, _, duration = json.loads(row)
        durations[nodeid] = durations.get(nodeid, 0.0) + duration
    if len(contexts) <= 1:
        raise SystemExit(f"the coverage of {module}'s tests names no test (only import time): the map would select none")
    result = {
        "source": source_digest(module),
        "tests": tests_digest(module),
        "tree": tree_digest(),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "contexts": sorted(contexts, key=contexts.__getitem__),
        "files": files,
        "durations": durations,
    }
    map_file(module).write_text(json.dumps(result))
    data_file.unlink(missing_ok=True)
    return result


def map_file(module: str) -> Path:
    """Where ``module``'s map of which test reaches which line is kept.

    One map for each version of the module (as it is unmutated) and of its tests, so that a run in another copy of the
    tree, with other tests, never reads a map that names them.
    """
    original = hashlib.sha256((WORK / f"{slug(module)}.original").read_bytes()).hexdigest()
    return WORK / f"{slug(module)}-{original[:12]}-{tests_digest(module)[:12]}.map.json"


def load_map(module: str) -> dict:
    """``module``'s map, taken when the module, its test files or a conftest are new, unless another module's map was
    taken on this very tree with the same test files (:func:`shared_map`).
    """
    path = map_file(module)
    if path.exists():
        return json.loads(path.read_text())
    return shared_map(module) or record_map(module)


@functools.cache
def tree_digest() -> str:
    """A digest of every file of the packages in the tree: two maps taken on equal digests ran on the same code."""
    digest = hashlib.sha256()
    for name in python_files(TREE, PACKAGES):
        digest.update(name.encode() + b"\0" + (TREE / name).read_bytes())
    return digest.hexdigest()


def shared_map(module: str) -> dict | None:
    """A map another module's run took on the same tree with the same test files, kept as ``module``'s (with the
    numba cache that run compiled), or None. Coverage measured every file of the packages in that run, so the lines of
    ``module`` are mapped as its own run would map them: modules tested by the same files share one run.
    """
    tests, tree = tests_digest(module), tree_digest()
    for candidate in sorted(WORK.glob("*.map.json")):
        recorded = json.loads(candidate.read_text())
        if recorded.get("tests") != tests or recorded.get("tree") != tree:
            continue
        donor = candidate.name.split("-")[0]
        shared, own = WORK / f"numba-{donor}", WORK / f"numba-{slug(module)}"
        shutil.rmtree(own, ignore_errors=True)
        if shared.is_dir():
            shutil.copytree(shared, own)
        recorded["source"] = source_digest(module)
        map_file(module).write_text(json.dumps(recorded))
        print(f"{module}: the map of {donor} (the same test files, the same tree)", flush=True)
        return recorded
    return None


def decorated_with(function: ast.AST, names: tuple[str, ...]) -> bool:
    """Whether a function or class definition carries one of the decorators ``names`` (called or not, by any module
    path).
    """
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in names:
            return True
    return False


# Decorators that compile a function with numba: coverage never sees the compiled body run.
KERNEL_DECORATORS = ("njit", "jit", "vectorize", "guvectorize", "cfunc", "stencil")
# Decorators that run a function's body once and keep what it gave: coverage names only the first test to call it.
CACHING_DECORATORS = ("cache", "lru_cache", "cached_property", "cached_per_rules")


def is_kernel(function: ast.AST) -> bool:
    """Whether a function definition is compiled by numba (``@njit``, ``@numba.jit(...)``, ``@vectorize``...)."""
    return decorated_with(function, KERNEL_DECORATORS)


def is_cached(function: ast.AST) -> bool:
    """Whether a function definition keeps its result (``@functools.cache``, ``@cached_property``...)."""
    return decorated_with(function, CACHING_DECORATORS)


def first_line(node: ast.stmt) -> int:
    """The first line of a statement, a definition's decorators included."""
    return min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])


def defined_names(statement: ast.stmt) -> list[str]:
    """The names a statement at the top of a module defines (a function, a class, the targets of an assignment)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]


class Source:
    """One parsed file: each line's innermost statement and enclosing definitions."""

    def __init__(self, text: str) -> None:
        self.tree = ast.parse(text)
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def statement(self, line: int) -> ast.stmt | None:
        """The innermost statement whose lines hold ``line`` (a compound statement only by its header)."""
        found = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and first_line(node) <= line <= (node.end_lineno or node.lineno):
                if found is None or first_line(node) >= first_line(found) and (node.end_lineno or 0) <= (found.end_lineno or 0):
                    found = node
        return found

    def own_lines(self, node: ast.stmt) -> range:
        """The lines of a statement less the statements nested in it (a compound statement's header)."""
        first = first_line(node)
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:
            return range(first, body[0].lineno)
        return range(first, (node.end_lineno or node.lineno) + 1)

    def enclosing(self, node: ast.AST) -> list[ast.AST]:
        """The definitions around ``node``, innermost first (functions and classes)."""
        around = []
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                around.append(node)
        return around

    def references(self, names: set[str]) -> list[ast.AST]:
        """Every use of one of ``names`` (``name`` or ``x.name``), definitions aside."""
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and node.id in names or isinstance(node, ast.Attribute) and node.attr in names:
                if isinstance(node.ctx, ast.Load):  # a use, not the assignment that defines it
                    found.append(node)
        return found

    def aliases(self, name: str) -> set[str]:
        """``name`` and what this file imports it as (``from m import name as other``)."""
        names = {name}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                names |= {alias.asname for alias in node.names if alias.name == name and alias.asname}
        return names


class TestMap:
    """Which tests reach a line of ``module``, from its map; see :meth:`select`."""

    def __init__(self, module: str, recorded: dict) -> None:
        self.module = module
        self.contexts: list[str] = recorded["contexts"]
        self.files: dict[str, dict[str, list[int]]] = recorded["files"]
        self.durations: dict[str, float] = recorded["durations"]
        self.sources: dict[str, Source] = {}
        self.traced: dict[tuple[str, str], set[str]] = {}

    def source(self, relative: str) -> Source:
        """The parsed source of a file of the tree, parsed once."""
        if relative not in self.sources:
            # The module itself as it was before the mutant: a mutant's lines are numbered in the original.
            path = WORK / f"{slug(self.module)}.original" if relative == self.module else TREE / relative
            self.sources[relative] = Source(path.read_text())
        return self.sources[relative]

    def reached(self, relative: str, lines: range | list[int]) -> set[str]:
        """The tests (node ids; a whole test file for a line reached while setting up a fixture) reaching ``lines``."""
        by_line = self.files.get(relative, {})
        tests = set()
        for line in lines:
            for index in by_line.get(str(line), ()):
                nodeid, _, phase = self.contexts[index].rpartition("|")
                if nodeid and phase == "run":
                    tests.add(nodeid)
                elif nodeid:  # a fixture's setup or teardown: other tests of its file may use what it made
                    tests.add(nodeid.split("::")[0])
        return tests

    def run_at_import(self, relative: str, lines: range | list[int]) -> bool:
        """Whether any of ``lines`` ran while a module was imported, outside every test (coverage's empty context)."""
        by_line = self.files.get(relative, {})
        return any(self.contexts[index] == "" for line in lines for index in by_line.get(str(line), ()))

    def everything(self, relative: str) -> set[str]:
        """Every test reaching any line of ``relative``: for a change made at import time (a constant, a class)."""
        return self.reached(relative, [int(line) for line in self.files.get(relative, {})])

    def name_tests(self, relative: str, name: str, seen: frozenset[tuple[str, str]]) -> set[str]:
        """The tests that reach a use of ``name``, defined at the top of ``relative`` (a kernel, a class, a constant).

        Every place in the project that names it counts (``name``, ``x.name``, or what ``from m import name as
        other`` calls it): a use inside a function by the tests that reach it, a use inside a kernel or in the
        definition of another name by that name's tests, in turn. Coverage sees neither compiled kernels nor
        pydantic's checks of a model's fields, so this is how their lines find their tests. A test file that names
        it counts too: the test that does, or the whole file when a helper or a fixture does.
        """
        key = (relative, name)
        if key in self.traced:
            return self.traced[key]
        seen = seen | {key}
        tests: set[str] = set()
        module_name = relative.removesuffix(".py").replace("/", ".")
        for package in PACKAGES:
            for path in sorted((TREE / package).rglob("*.py")):
                other = path.relative_to(TREE).as_posix()
                text = (WORK / f"{slug(self.module)}.original" if other == self.module else path).read_text()
                if other != relative and (name not in text or module_name.rpartition(".")[2] not in text):
                    continue  # does not name it, or does not import its module
                source = self.source(other)
                for node in source.references(source.aliases(name)):
                    tests |= self.line_tests(other, node.lineno, seen)
        for test_file in test_files(self.module):
            text = (TREE / test_file).read_text()
            if name not in text:
                continue
            source = Source(text)
            for node in source.references(source.aliases(name)):
                around = source.enclosing(node)
                if around and around[-1].name.startswith("test") and isinstance(around[-1], ast.FunctionDef):
                    named = re.compile(rf"{re.escape(test_file)}::{around[-1].name}\b")
                    tests |= {nodeid for nodeid in self.durations if named.match(nodeid)}
                else:  # a helper or a fixture of the test file: the whole file
                    tests.add(test_file)
        self.traced[key] = tests
        return tests

    def line_tests(self, relative: str, line: int, seen: frozenset[tuple[str, str]] = frozenset()) -> set[str]:
        """The tests that reach ``line`` of ``relative`` (numbered as in the unmutated file).

        - a line of a kernel: the tests that reach the uses of the kernel (see :meth:`name_tests`);
        - a line of a cached function (``@cache``, ``@cached_property``...): also the tests that reach its uses;
        - a line of a function's header (decorators, signature, defaults: run at import): the tests reaching its body,
          or the uses of its class when no test reaches the body;
        - a line of a class outside its methods (a field, a class attribute): the tests reaching the class's methods
          and the uses of the class;
        - a line at the top of the module: the tests reaching the uses of what it defines, or every test that reaches
          the module when it defines nothing that can be traced;
        - any other line: the tests that reach its statement.
        """
        source = self.source(relative)
        statement = source.statement(line)
        if statement is None:
            return set()  # a blank or comment line
        around = source.enclosing(statement)
        kernel = next((d for d in [statement, *around] if is_kernel(d)), None)
        if kernel is not None:
            return set() if (relative, kernel.name) in seen else self.name_tests(relative, kernel.name, seen)
        cached = next((d for d in [statement, *around] if is_cached(d)), None)
        if cached is not None and (relative, cached.name) not in seen:
            # its body ran for the first test only: every test that uses what it keeps may see the change
            tests = self.uncached_line_tests(relative, line, statement, around, seen)
            return tests | self.name_tests(relative, cached.name, seen)
        return self.uncached_line_tests(relative, line, statement, around, seen)

    def uncached_line_tests(
        self, relative: str, line: int, statement: ast.stmt, around: list, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> set[str]:
        """:meth:`line_tests` of a line outside kernels and cached functions."""
        source = self.source(relative)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and line < statement.body[0].lineno:
            tests = self.reached(relative, range(statement.body[0].lineno, (statement.end_lineno or line) + 1))
            if not tests and around and (relative, around[-1].name) not in seen:
                # a method no test calls (an abstract one): its defaults are still read, through its class's signature
                tests = self.name_tests(relative, around[-1].name, seen)
            return tests
        if any(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) for d in around):
            tests = self.reached(relative, source.own_lines(statement))
            outermost = around[-1]
            if self.run_at_import(relative, source.own_lines(statement)) and (relative, outermost.name) not in seen:
                # a function called while the module is imported (a table built by a helper): what it made is used later
                tests |= self.name_tests(relative, outermost.name, seen)
            return tests
        if around:  # in a class, outside its methods
            cls = around[-1]
            tests = self.reached(relative, range(cls.lineno, (cls.end_lineno or cls.lineno) + 1))
            return tests | (set() if (relative, cls.name) in seen else self.name_tests(relative, cls.name, seen))
        names = defined_names(statement)
        if not names:
            return self.everything(relative)
        tests = set()
        for name in names:
            if (relative, name) not in seen:
                tests |= self.name_tests(relative, name, seen)
        return tests

    def select(self, lines: list[int]) -> tuple[set[str], bool]:
        """``(tests, compiled)``: the tests that reach ``lines`` of the module (see :meth:`line_tests`), and whether
        compiled code may have changed: a kernel's line, or a line at the top of the module (a kernel reads a module
        constant when it is compiled).
        """
        source = self.source(self.module)
        tests: set[str] = set()
        compiled = False
        for line in lines:
            statement = source.statement(line)
            if statement is None:
                continue
            around = source.enclosing(statement)
            compiled = compiled or not around or any(is_kernel(d) for d in [statement, *around])
            tests |= self.line_tests(self.module, line)
        return tests, compiled

    def ordered(self, tests: set[str]) -> list[str]:
        """``tests`` file by file in the order of :func:`test_files` (the module's own tests first: they kill soonest),
        quickest first within a file; a whole test file in its place, without its own node ids listed again.
        """
        files = {test for test in tests if "::" not in test}
        chosen = [test for test in tests if "::" not in test or test.split("::")[0] not in files]
        order = test_files(self.module)

        def place(test: str) -> tuple:
            file = test.split("::")[0]
            return (order.index(file) if file in order else len(order), "::" not in test, self.durations.get(test, 0.0), test)

        return sorted(chosen, key=place)


def what_runs(text: str) -> str:
    """The syntax tree of ``text`` less what Python never runs: docstrings, ``from __future__`` imports and, in a module
    of postponed annotations (``from __future__ import annotations``), the annotations of functions' arguments, returns,
    local variables and the attributes they set (not those of a class defined in one), and of a dataclass's fields:
    ``dataclasses`` reads those strings only for ``ClassVar``, ``InitVar`` and ``KW_ONLY`` (an annotation naming one
    stays). Any other class's annotations stay: pydantic and ``NamedTuple`` read them.
    """
    tree = ast.parse(text)
    postponed = any(
        isinstance(node, ast.ImportFrom) and node.module == "__future__" and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                first.value.value = ""  # the docstring's place stays: a body is never left empty
        if isinstance(node, ast.Module):
            node.body = [n for n in node.body if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
        if postponed and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for argument in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]:
                if argument is not None:
                    argument.annotation = None
            for inner in run_in_function(node):
                if isinstance(inner, ast.AnnAssign):  # a local's or an attribute's (self.seeds: list[int] = ...)
                    inner.annotation = ast.Constant(None)
        if postponed and isinstance(node, ast.ClassDef) and decorated_with(node, ("dataclass",)):
            for field in node.body:
                if isinstance(field, ast.AnnAssign) and not DATACLASS_READS.search(ast.unparse(field.annotation)):
                    field.annotation = ast.Constant(None)
    return ast.dump(tree)


def run_in_function(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of ``function``'s body, less those of the classes it defines: their annotations are a class's (a
    model defined in a function reads them), not a function's.
    """
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


# What ``dataclasses`` looks for in a field's annotation string: every other annotation of a field is never evaluated.
DATACLASS_READS = re.compile(r"\b(ClassVar|InitVar|KW_ONLY)\b")


def is_python(text: str) -> bool:
    """Whether ``text`` parses: Cosmic Ray turns the ``*`` that ends a signature's positional parameters into ``+``,
    which is no program at all (it would count as killed by failing to import, saying nothing of the tests).
    """
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def only_annotations_changed(original: str, mutated: str) -> bool:
    """Whether ``mutated`` differs from ``original`` only where Python never runs (see :func:`what_runs`)."""
    return what_runs(original) == what_runs(mutated)


def changed_lines(original: str, mutated: str) -> list[int]:
    """The lines of ``original`` (numbered from 1) that differ in ``mutated``."""
    lines: set[int] = set()
    matcher = difflib.SequenceMatcher(None, original.splitlines(), mutated.splitlines(), autojunk=False)
    for tag, first, last, _, _ in matcher.get_opcodes():
        if tag != "equal":
            lines.update(range(first + 1, max(last, first + 1) + 1))
    return sorted(lines)


def sampled(module: str, database, size: int) -> set[str]:
    """The job ids of a random sample of ``size`` of ``module``'s mutants (those the filters left in), the same sample
    on every run: the first ``size`` of a shuffle seeded with the module's name, over the mutants in the order of their
    places in the source (so it does not depend on the ids Cosmic Ray gave them). A larger sample holds a smaller one.
    """
    import random

    left_out = {item.job_id for item, result in database.completed_work_items if result.worker_outcome.value == "skipped"}
    kept = [item for item in database.work_items if item.job_id not in left_out]
    kept.sort(key=lambda item: (item.mutations[0].start_pos, item.mutations[0].operator_name, item.mutations[0].occurrence))
    random.Random(module).shuffle(kept)
    return {item.job_id for item in kept[:size]}


def mutated_source(original: str, mutation) -> str | None:
    """The source ``original`` with ``mutation`` (a Cosmic Ray mutation spec) applied, or None where it applies nowhere."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    operator = get_operator(mutation.operator_name)(**(mutation.operator_args or {}))
    return mutate_code(original, operator, mutation.occurrence)


def leave_out_what_never_runs(module: str, session: Path) -> int:
    """Mark as skipped (never tested, never counted) each mutant of a new session that changes only annotations, a
    ``__future__`` import or a docstring (:func:`only_annotations_changed`), or that is not Python (:func:`is_python`);
    how many there were.
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    original = (TREE / module).read_text()
    with use_db(str(session), WorkDB.Mode.open) as database:
        never_run, unmade = [], []
        for item in database.pending_work_items:
            try:
                mutated = mutated_source(original, item.mutations[0])
            except Exception:  # Cosmic Ray's own failure to make this one (NOT_MADE): no mutant, nothing to test
                unmade.append(item.job_id)
                continue
            if mutated is not None and (not is_python(mutated) or only_annotations_changed(original, mutated)):
                never_run.append(item.job_id)
        for jobs, why in ((never_run, NOT_GENERATED), (unmade, NOT_MADE)):
            if jobs:
                database.set_multiple_results(jobs, WorkResult(output=why, worker_outcome=WorkerOutcome.SKIPPED))
    return len(never_run) + len(unmade)


def mutant_key(original: str, mutated: str) -> str:
    """A mutant's name in :data:`REASONS`, kept when lines elsewhere move: the lines it changes, before and after."""
    before, after = original.splitlines(), mutated.splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    old, new = [], []
    for tag, first, last, first_new, last_new in matcher.get_opcodes():
        if tag != "equal":
            old += [line.strip() for line in before[first:last]]
            new += [line.strip() for line in after[first_new:last_new]]
    return f"{' / '.join(old)} -> {' / '.join(new)}"


def read_reasons(path: Path | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """``{module: {mutant key: {"kind": equivalent or accepted, "why": ...}}}`` from :data:`REASONS`, each entry
    checked: a reason of another kind, or without a why, stops the run naming it.
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    path = REASONS if path is None else path
    if not path.exists():
        return {}
    try:
        reasons = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:  # a module's table declared twice, say: one line naming it
        raise SystemExit(f"{path.name}: {error}") from None
    for module, entries in reasons.items():
        for key, entry in entries.items():
            if not isinstance(entry, dict) or entry.get("kind") not in REASON_KINDS or not str(entry.get("why", "")).strip():
                raise SystemExit(
                    f"{path.name}: [{module}] {key!r}: expected {{ kind = one of {', '.join(REASON_KINDS)}, why = a sentence }}"
                )
    return reasons


def run_module(
    module: str,
    retest_survivors: bool,
    restart: bool,
    execute_pending: bool = True,
    sample: int = 0,
    unexplained: bool = False,
) -> None:
    """Mutate ``module`` and test every mutant not tested yet (or every survivor again, or with ``unexplained`` those
    no reason explains; or none, only preparing); with ``sample``, only the mutants of that random sample of the
    module (see :func:`sampled`).
    """
    if not test_files(module):
        print(f"{module}: no test file imports it (nor a file that does): nothing to run its mutants", flush=True)
        return
    config, session = write_config(module), WORK / f"{slug(module)}.sqlite"
    stamp, original = session.with_suffix(".source"), session.with_suffix(".original")
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
        leave_out_what_never_runs(module, session)
    original.write_text((TREE / module).read_text())
    recorded = load_map(module)
    from cosmic_ray.work_db import WorkDB, use_db

    if not execute_pending:
        return
    if retest_survivors:
        items = survivors_to_retest(module, unexplained)
    else:
        with use_db(str(session), WorkDB.Mode.open) as database:
            items = list(database.pending_work_items)
            if sample:
                chosen = sampled(module, database, sample)
                items = [item for item in items if item.job_id in chosen]
    # A mutant that loops for ever is stopped by its CPU limit (run_tests); this limit on the wall clock, four times
    # the map's run of every test and 5 minutes at least, stops one that waits without using the CPU.
    execute(module, session, items, timeout=max(300.0, 4 * recorded["seconds"]))


def execute(module: str, session: Path, items: list, timeout: float) -> None:
    """Test the mutants ``items`` of ``module`` one by one, each result kept in the session as soon as it is known."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    log = WORK / f"{slug(module)}.log.jsonl"
    command = f"{sys.executable} {TREE / 'tools' / 'mutation.py'} --run-tests {module}"  # the copy: frozen at start
    here = Path.cwd()
    os.chdir(TREE)  # the mutants' paths are relative to the tree
    try:
        for number, item in enumerate(items, 1):
            started = time.monotonic()
            result = mutate_and_test(item.mutations, command, timeout)
            seconds = time.monotonic() - started
            with use_db(str(session), WorkDB.Mode.open) as database:
                database.set_result(item.job_id, result)
            outcome = result.test_outcome.value if result.test_outcome else result.worker_outcome.value
            selected = re.search(r"^mutation: (.*)$", result.output or "", re.MULTILINE)
            with log.open("a") as out:
                row = {"job": item.job_id, "line": item.mutations[0].start_pos[0], "outcome": outcome}
                out.write(json.dumps(row | {"seconds": round(seconds, 2), "selected": selected and selected[1]}) + "\n")
            print(f"{module}: {number}/{len(items)} line {row['line']} {outcome} in {seconds:.1f} s", flush=True)
    finally:
        os.chdir(here)


def run_tests(module: str) -> int:
    """The test command of one mutant of ``module``: the tests that reach the changed lines, quickest first, stopped
    at the first failure, then, if it still lives, every test file of the module (a survivor passes them all).

    ``YACHT_RL_MUTATION_SELECT=all`` runs every test file of the module with the usual hypothesis profile instead,
    as each mutant was tested before the map (kept to measure the two).
    """
    recorded = json.loads(map_file(module).read_text())
    original = (WORK / f"{slug(module)}.original").read_text()
    mutated = (TREE / module).read_text()
    lines = changed_lines(original, mutated)
    everything = os.environ.get("YACHT_RL_MUTATION_SELECT") == "all"
    if not everything and only_annotations_changed(original, mutated):
        print(f"mutation: lines {lines}, an annotation never evaluated: equivalent", flush=True)
        return 0
    if everything:
        tests, compiled = list(test_files(module)), "njit" in original
    else:
        test_map = TestMap(module, recorded)
        traced = map_file(module).with_suffix(".traced.json")  # the uses traced so far: the same for every mutant
        if traced.exists():
            test_map.traced = {tuple(key.split("\0")): set(value) for key, value in json.loads(traced.read_text()).items()}
        known = len(test_map.traced)
        chosen, compiled = test_map.select(lines)
        tests = test_map.ordered(chosen)
        if len(test_map.traced) > known:
            kept = {"\0".join(key): sorted(value) for key, value in test_map.traced.items()}
            staged = traced.with_suffix(f".{os.getpid()}")
            staged.write_text(json.dumps(kept))
            staged.replace(traced)
        files = sum("::" not in test for test in tests)
        print(f"mutation: lines {lines}, {len(tests) - files} tests and {files} whole test files", flush=True)
    solved = WORK / "solved"
    before = set(solved.iterdir()) if solved.exists() else set()
    # A mutant of compiled code (or of a constant a kernel reads) compiles everything afresh; any other reuses the
    # kernels compiled from the unmutated code.
    shared_cache = WORK / f"numba-{slug(module)}"
    numba_cache = tempfile.mkdtemp(prefix="numba-", dir=WORK) if compiled else shared_cache
    if compiled:
        seed_numba_cache(module, shared_cache, Path(numba_cache))
    environment = test_environment(module, numba_cache)
    if everything:
        environment.pop("YACHT_RL_HYPOTHESIS_PROFILE")
    # The tests of the first test file chosen, which kill most mutants, then the others; a test file that is never run
    # is never imported (the server's tests import the whole server).
    stages = []
    if tests:
        first = tests[0].split("::")[0]
        in_first = [test for test in tests if test.split("::")[0] == first]
        stages = [in_first, [test for test in tests if test not in in_first]]
    if not everything:
        # Then, for a mutant the chosen tests pass, every test file of the module: a survivor is one that all of them
        # pass. The map can miss a test: coverage names only the first caller of a result kept for later (a table
        # cached per rule set, an object built once), and no test at all for a line only such a result runs.
        stages.append([name for name in test_files(module) if name not in tests])  # a whole file chosen has run
    listing = Path(tempfile.mkstemp(prefix="tests-", suffix=".txt", dir=WORK)[1])
    limit, cpu_seconds = mutant_test_limit(recorded), mutant_cpu_limit(recorded)
    try:
        for number, stage in enumerate(stages):
            if not stage:
                continue
            # Only the last stage's failures are confirmed: the tests chosen reach the changed lines, while a test of
            # the last stage fails for the machine's sake as often as for the mutant's.
            confirm = not everything and number == len(stages) - 1
            code = run_stage(stage, listing, limit, cpu_seconds, confirm, cwd=TREE, env=environment)
            if code not in (0, 5):  # 5: every test chosen was deselected (marked slow since the map): none failed
                return code
        return 0
    finally:
        listing.unlink(missing_ok=True)
        if compiled:
            shutil.rmtree(numba_cache, ignore_errors=True)
        for path in set(solved.iterdir()) - before:  # a mutant's own tables: never read again
            path.unlink(missing_ok=True)


def reached_by_change(module: str) -> set[str]:
    """``module`` and every file of the packages that imports it, directly or through others: the only files whose
    compiled kernels a change to ``module`` can alter (a kernel calls, or reads a constant of, only what its file
    imports).
    """
    importers = importers_in(TREE)
    found, stack = {module}, [module]
    while stack:
        for importer in importers.get(stack.pop(), ()):
            if importer not in found and not importer.startswith("tests/"):
                found.add(importer)
                stack.append(importer)
    return found


def seed_numba_cache(module: str, shared: Path, fresh: Path) -> int:
    """Copy into a mutant's ``fresh`` numba cache the kernels of the ``shared`` one (compiled from the unmutated code by
    the map's run) that the change cannot reach (:func:`reached_by_change`): only those are compiled again. Numba keeps
    a file's kernels in ``<its folder>_<digest of the folder's path>/<its stem>.<kernel>-<line>.py<version>.<ext>``; a
    file of a name shared by several folders of the same last name is left out if any of them is reached. Returns how
    many cache files were copied.
    """
    reached = {(Path(name).parent.name, Path(name).stem) for name in reached_by_change(module)}
    copied = 0
    for path in sorted(shared.glob("*/*")) if shared.is_dir() else []:
        folder, stem = path.parent.name.rpartition("_")[0], path.name.split(".")[0]
        if (folder, stem) in reached or not path.is_file():
            continue
        (fresh / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, fresh / path.parent.name / path.name)
        copied += 1
    return copied


def measure(module: str, count: int, before: bool) -> None:
    """Seconds per mutant of ``count`` mutants drawn from ``module``'s session, with the map (and without, as
    before, when ``before``), written to ``<slug>.measure.json``; the session's results are left as they are.
    """
    import random

    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(WORK / f"{slug(module)}.sqlite"), WorkDB.Mode.open) as database:
        left_out = {item.job_id for item, result in database.completed_work_items if result.worker_outcome.value == "skipped"}
        items = sorted((item for item in database.work_items if item.job_id not in left_out), key=lambda item: item.job_id)
    rows = []
    here = Path.cwd()
    os.chdir(TREE)
    try:
        for item in random.Random(26).sample(items, min(count, len(items))):
            mutation = item.mutations[0]
            row = {"job": item.job_id, "line": mutation.start_pos[0], "operator": mutation.operator_name}
            with use_mutation(mutation.module_path, get_operator(mutation.operator_name)(), mutation.occurrence) as (_, code):
                if code is None:
                    continue
                for way in ("before", "after") if before else ("after",):
                    environment = dict(os.environ, YACHT_RL_MUTATION_SELECT="all" if way == "before" else "map")
                    started = time.monotonic()
                    command = [sys.executable, str(ROOT / "tools" / "mutation.py"), "--run-tests", module]
                    done = subprocess.run(command, env=environment, capture_output=True, text=True)
                    row[way] = {"seconds": round(time.monotonic() - started, 2), "killed": done.returncode != 0}
                    if way == "after":
                        row["selected"] = (re.findall(r"^mutation: (.*)$", done.stdout, re.MULTILINE) or [""])[0]
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        os.chdir(here)
    (WORK / f"{slug(module)}.measure.json").write_text(json.dumps(rows, indent=1))
    for way in ("before", "after"):
        timed = [row[way]["seconds"] for row in rows if way in row]
        if timed:
            killed = sum(row[way]["killed"] for row in rows if way in row)
            print(f"{module} {way}: {len(timed)} mutants, {sum(timed) / len(timed):.1f} s each, {killed} killed")


def module_results(module: str) -> dict[str, list]:
    """``{outcome: [(work item, result), ...]}`` of ``module``'s session: killed, survived, pending, skipped."""
    from cosmic_ray.work_db import WorkDB, use_db

    outcomes: dict[str, list] = {"killed": [], "survived": [], "pending": [], "skipped": [], "error": []}
    session = WORK / f"{slug(module)}.sqlite"
    if not session.exists():
        return outcomes
    with use_db(str(session), WorkDB.Mode.open) as database:
        for item, result in database.completed_work_items:
            if result.worker_outcome.value in ("skipped", "no-test") or cannot_be_made(result):
                outcomes["skipped"].append((item, result))
            elif result.worker_outcome.value != "normal":
                outcomes["error"].append((item, result))
            else:
                kind = {"killed": "killed", "survived": "survived"}.get(result.test_outcome.value, "error")
                outcomes[kind].append((item, result))
        outcomes["pending"] = [(item, None) for item in database.pending_work_items]
    return outcomes


def cannot_be_made(result) -> bool:
    """Whether a session's result says that Cosmic Ray could not make the mutant (:data:`NOT_MADE`)."""
    output = result.output or ""
    return output == NOT_MADE or result.worker_outcome.value == "exception" and "in apply_mutation" in output


def not_generated(result) -> bool:
    """Whether a skipped mutant was never generated: only what never runs changed, or Cosmic Ray could not make it."""
    return result.output == NOT_GENERATED or cannot_be_made(result)


def why_survived(output: str) -> str:
    """What a survivor's test run said of it: an annotation, a line no test reaches in the map, or the tests it passed
    (a survivor has passed every test file of its module too: :func:`run_tests`).
    """
    said = re.search(r"^mutation: lines (\[[\d, ]*\]), (.*)$", output, re.MULTILINE)
    if said is None:
        return "Every test file of the module passed."
    if re.match(r"0 tests( and 0 whole test files)?$", said[2]):
        return f"No test reaches lines {said[1]} in the map; every test file of the module passed."
    if "equivalent" in said[2]:
        return f"Lines {said[1]}: {said[2]}."
    return f"Lines {said[1]}: what reaches them passed ({said[2]})."


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion: the kill rate of a module from a random sample of its mutants."""
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * ((share * (1 - share) / trials + z * z / (4 * trials * trials)) ** 0.5) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def keyed_survivors(module: str, survivors: list) -> list[tuple[str, object, object]]:
    """``(key, work item, result)`` of each survivor of ``module``, by line: its key in :data:`REASONS` (see
    :func:`mutant_key`); a key met twice gets ``#2``.
    """
    original_file = WORK / f"{slug(module)}.original"
    original = original_file.read_text() if original_file.exists() else ""
    keyed = []
    seen: dict[str, int] = {}
    for item, result in sorted(survivors, key=lambda pair: pair[0].mutations[0].start_pos):
        mutation = item.mutations[0]
        mutated = mutated_source(original, mutation) if original else None
        key = mutant_key(original, mutated) if mutated is not None else f"{mutation.operator_name} #{mutation.occurrence}"
        seen[key] = seen.get(key, 0) + 1
        keyed.append((key + (f" #{seen[key]}" if seen[key] > 1 else ""), item, result))
    return keyed


def survivor_records(module: str, survivors: list) -> list[dict]:
    """Each survivor of ``module`` as kept in :data:`RESULTS` (key, line, diff, what its test run said), by line."""
    return [
        {
            "key": key,
            "line": item.mutations[0].start_pos[0],
            "diff": (result.diff or "").rstrip(),
            "output": why_survived(result.output or ""),
        }
        for key, item, result in keyed_survivors(module, survivors)
    ]


def survivors_to_retest(module: str, unexplained: bool = False) -> list:
    """The work items of ``module``'s survivors that new tests may kill: every one but those :data:`REASONS` gives as
    equivalent (no test can tell them from the module; an accepted one may yet be killed); with ``unexplained``, only
    those it gives no reason for (a survivor runs every test file of its module: where they are slow, the accepted
    ones need not run again after tests written for the others).
    """
    reasons = read_reasons().get(module, {})
    survivors = keyed_survivors(module, module_results(module)["survived"])
    left_out = {"equivalent", "accepted"} if unexplained else {"equivalent"}
    kept = [item for key, item, _ in survivors if reasons.get(key, {}).get("kind") not in left_out]
    left = f"{len(survivors) - len(kept)} {'explained' if unexplained else 'equivalent'}"
    print(f"{module}: {len(kept)} of {len(survivors)} survivors to test again ({left})", flush=True)
    return kept


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes, as :data:`RESULTS` keeps a module's source."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def measured(module: str) -> dict | None:
    """``module``'s outcome from its session under :data:`WORK`, as :data:`RESULTS` keeps it (see :func:`check_entry`),
    or None where the module has no session here or has mutants of which none is tested yet. A module of which no
    mutant is made (``sys.exit(main())`` alone) is measured as it is: no mutant, nothing to score.
    """
    session = WORK / f"{slug(module)}.sqlite"
    if not session.exists():
        return None
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(session.stat().st_mtime))  # its last result
    outcomes = module_results(module)
    tested = len(outcomes["killed"]) + len(outcomes["survived"])
    if not tested and (outcomes["pending"] or outcomes["error"]):
        return None
    # The source the session's mutants were made from: its stamp, or the copy its last run kept.
    stamp, original = session.with_suffix(".source"), session.with_suffix(".original")
    source = stamp.read_text().strip() if stamp.exists() else file_digest(original if original.exists() else ROOT / module)
    return {
        "source": source,
        "measured": when,
        "killed": len(outcomes["killed"]),
        "survived": len(outcomes["survived"]),
        "sample": tested,
        "mutants": tested + len(outcomes["pending"]) + len(outcomes["error"]),
        "not_generated": sum(not_generated(result) for _, result in outcomes["skipped"]),
        "survivors": survivor_records(module, outcomes["survived"]),
    }


class ResultsError(SystemExit):
    """A :data:`RESULTS` file of the wrong shape: one line naming the file, the field and what is allowed."""

    def __init__(self, path: Path, field: str, expected: str, value: object) -> None:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        super().__init__(f"{path.name}: {field}: expected {expected}, got {shown}")


def check_count(path: Path, field: str, value: object) -> int:
    """A count of mutants: a whole number from 0 (``True`` is no count)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MOST_MUTANTS:
        raise ResultsError(path, field, f"a whole number from 0 to {MOST_MUTANTS}", value)
    return value


def check_fields(path: Path, field: str, value: object, names: tuple[str, ...]) -> dict:
    """An object with exactly the fields ``names``."""
    if not isinstance(value, dict):
        raise ResultsError(path, field, f"an object of {', '.join(names)}", value)
    for name in [*names, *value]:
        if name not in names or name not in value:
            found = "missing" if name not in value else "not allowed"
            raise ResultsError(path, f"{field}.{name}", f"only the fields {', '.join(names)}", found)
    return value


def check_text(path: Path, field: str, value: object, one_line: bool) -> str:
    """A string (on one line where the report prints it inside a line)."""
    if not isinstance(value, str) or one_line and ("\n" in value or "\r" in value):
        raise ResultsError(path, field, "a string" + (" on one line" if one_line else ""), value)
    return value


def check_survivor(path: Path, field: str, survivor: object) -> None:
    """One survivor of :data:`RESULTS`: its key (as in :data:`REASONS`), line, diff and what its test run said."""
    survivor = check_fields(path, field, survivor, SURVIVOR_FIELDS)
    if not check_text(path, f"{field}.key", survivor["key"], one_line=True).strip():
        raise ResultsError(path, f"{field}.key", "the lines the mutant changes, before -> after", survivor["key"])
    if check_count(path, f"{field}.line", survivor["line"]) < 1:
        raise ResultsError(path, f"{field}.line", "a line number from 1", survivor["line"])
    check_text(path, f"{field}.diff", survivor["diff"], one_line=False)
    check_text(path, f"{field}.output", survivor["output"], one_line=True)


def check_entry(path: Path, module: str, entry: object) -> dict:
    """One module's outcome in :data:`RESULTS`: the digest of the source measured (sha256), when (UTC), the counts of
    :data:`COUNTS` (killed + survived = sample <= mutants) and each survivor.
    """
    field = f"modules[{module!r}]"
    if not re.fullmatch(r"[A-Za-z_]\w*(/[A-Za-z_]\w*)*\.py", module) or module.split("/")[0] not in PACKAGES:
        raise ResultsError(path, "modules", f"module paths under {', '.join(PACKAGES)} (like yacht_env/rules.py)", module)
    entry = check_fields(path, field, entry, ENTRY_FIELDS)
    if not isinstance(entry["source"], str) or not re.fullmatch(r"[0-9a-f]{64}", entry["source"]):
        raise ResultsError(path, f"{field}.source", "the sha256 of the module's source, 64 hex digits", entry["source"])
    when = entry["measured"]
    try:
        time.strptime(when, "%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        raise ResultsError(path, f"{field}.measured", "a UTC time like 2026-01-31T12:00:00Z", when) from None
    counts = {name: check_count(path, f"{field}.{name}", entry[name]) for name in COUNTS}
    if counts["killed"] + counts["survived"] != counts["sample"]:
        raise ResultsError(path, f"{field}.sample", "killed + survived", counts["sample"])
    if counts["mutants"] < counts["sample"]:
        raise ResultsError(path, f"{field}.mutants", f"at least the sample, {counts['sample']}", counts["mutants"])
    survivors = entry["survivors"]
    if not isinstance(survivors, list) or len(survivors) != counts["survived"]:
        raise ResultsError(path, f"{field}.survivors", f"a list of the {counts['survived']} survivors", survivors)
    for number, survivor in enumerate(survivors):
        check_survivor(path, f"{field}.survivors[{number}]", survivor)
    return entry


def read_results(path: Path | None = None) -> dict[str, dict]:
    """``{module: its measured outcome}`` from :data:`RESULTS` (none where the file is missing), every field checked
    (:func:`check_entry`): a file of another shape stops the run in one line naming the field, before anything is
    written.
    """
    path = RESULTS if path is None else path
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SystemExit(f"{path.name}: not a JSON file in UTF-8 ({error})") from None
    data = check_fields(path, "the file", data, ("format", "modules"))
    if data["format"] != RESULTS_FORMAT or isinstance(data["format"], bool):
        raise ResultsError(path, "format", str(RESULTS_FORMAT), data["format"])
    if not isinstance(data["modules"], dict):
        raise ResultsError(path, "modules", "an object of module paths", data["modules"])
    return {module: check_entry(path, module, entry) for module, entry in data["modules"].items()}


def write_atomically(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file beside it, renamed over it: a stopped run leaves the old file or the new."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_results(results: dict[str, dict], path: Path | None = None) -> None:
    """:data:`RESULTS`, modules in order, one survivor field a line (a new measurement shows as a small diff)."""
    data = {"format": RESULTS_FORMAT, "modules": dict(sorted(results.items()))}
    write_atomically(RESULTS if path is None else path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def updated_results(modules: list[str]) -> dict[str, dict]:
    """:data:`RESULTS` with the outcome of each of ``modules`` that has a session here (:func:`measured`) in place of
    the one kept, unless the one kept was measured later (elsewhere); a module without a session keeps its entry.
    """
    results = read_results()
    for module in modules:
        local = measured(module)
        if local is not None and (module not in results or results[module]["measured"] <= local["measured"]):
            results[module] = local
    return results


def score_cells(killed: int, counted: int) -> str:
    """A score and its 95% Wilson interval, or a dash with nothing counted."""
    if not counted:
        return "- | -"
    low, high = wilson_interval(killed, counted)
    return f"{killed / counted:.1%} | {low:.1%} to {high:.1%}"


def is_current(module: str, entry: dict) -> bool:
    """Whether ``entry`` was measured on ``module``'s source as it is now in the checkout."""
    path = ROOT / module
    return path.is_file() and file_digest(path) == entry["source"]


def report_tables(modules: list[str], results: dict[str, dict], reasons: dict) -> tuple[list[str], list[str], list[str]]:
    """The report's table rows, its survivor lines and ``.mutation/survivors.md``'s lines, from ``results``."""
    table, listed, diffs = [], [], ["# Survivors of the mutation run, with their diffs", ""]
    total = dict.fromkeys(("killed", "equivalent", "accepted", "survived", "sample", "mutants", "not_generated"), 0)
    for module in (name for name in modules if name in results):
        entry = results[module]
        explained = [reasons.get(module, {}).get(survivor["key"]) for survivor in entry["survivors"]]
        kinds = [reason["kind"] if reason else "survived" for reason in explained]
        row = {"killed": entry["killed"], **{kind: kinds.count(kind) for kind in ("equivalent", "accepted", "survived")}}
        row |= {name: entry[name] for name in ("sample", "mutants", "not_generated")}
        total = {name: total[name] + row[name] for name in total}
        shown = {name: str(row[name]) for name in ("killed", "equivalent", "accepted", "survived", "sample", "mutants")}
        wanted = min(SAMPLE_TARGET, row["mutants"])
        if row["sample"] < wanted:  # a run stopped before its sample was tested
            shown["sample"] += f" (short of {wanted})"
        cells = " | ".join(shown.values())
        score = score_cells(row["killed"], row["sample"] - row["equivalent"])
        earlier = "" if is_current(module, entry) else f" {EARLIER_VERSION}"
        table.append(f"| `{module}` | {cells} | {score} | {row['not_generated']} | {entry['measured'][:10]}{earlier} |")
        for survivor, reason in zip(entry["survivors"], explained):
            unexplained = f"**not explained**: {survivor['output'] or 'no test output kept.'}"
            said = f"{reason['kind']}: {reason['why']}" if reason else unexplained
            place = f"`{module}`:{survivor['line']} `{survivor['key']}`"
            listed.append(f"- {place}{earlier}: {said}")
            diffs += [f"## {place}", "", "```diff", survivor["diff"] or "(no diff kept)", "```", ""]
    cells = " | ".join(str(total[name]) for name in ("killed", "equivalent", "accepted", "survived", "sample", "mutants"))
    score = score_cells(total["killed"], total["sample"] - total["equivalent"])
    table.append(f"| all modules tested | {cells} | {score} | {total['not_generated']} | |")
    return table, listed, diffs


def write_report(modules: list[str]) -> Path:
    """:data:`RESULTS` brought up to date with the sessions here (:func:`updated_results`), then :data:`SCORES` built
    from it (both kept under version control): a row per module measured, every survivor with its reason from
    :data:`REASONS`, and the modules not measured yet; ``.mutation/survivors.md``: every survivor's diff.
    """
    reasons = read_reasons()
    results = updated_results(modules)
    head = "| module | killed | equivalent | accepted | survived | sample | mutants | score | 95% interval | not generated "
    head += "| measured |"
    table, listed, diffs = report_tables(modules, results, reasons)
    untested = [
        f"`{module}`" + ("" if test_files(module, ROOT) else " (no test file imports it)")
        for module in modules
        if module not in results
    ]
    text = [
        "# Mutation scores",
        "",
        "Written by `python tools/mutation.py` (see its docstring) from each module's measured outcome, kept in",
        "`tools/mutation_results.json`; the reasons come from `tools/mutation_reasons.toml`. A run replaces the",
        "outcomes of the modules it measures and keeps the others. A module's sample is a random sample of its mutants",
        "(`--sample N`: the same mutants on every run), or all of them. The score is the share killed of the mutants",
        "that are not equivalent: killed / (sample - equivalent); an accepted survivor counts against it, as one not",
        "yet explained does. The interval is the 95% Wilson interval of that share over all of the module's mutants.",
        "Mutants that change only annotations, a `__future__` import or a docstring are not generated, nor those Cosmic",
        "Ray fails to make (its exception replacer on `except (A, module.B)`). The date is when",
        f"the module was measured; {EARLIER_VERSION} marks a module whose source has changed since, and its survivors'",
        "lines are those of the version measured. A sample smaller than "
        f"{SAMPLE_TARGET} mutants (or all of them, for a module with fewer) is marked short. A module of which no mutant is",
        "made (a call alone, as `sys.exit(main())`) has a row of zeros and no score.",
        "",
        head,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
        *table,
        "",
        "## Survivors",
        "",
        *(listed or ["None."]),
        "",
        "## Modules not tested yet",
        "",
        ", ".join(untested) if untested else "None.",
    ]
    write_results(results)
    write_atomically(SCORES, "\n".join(text) + "\n")
    WORK.mkdir(exist_ok=True)
    (WORK / "survivors.md").write_text("\n".join(diffs) + "\n")
    return SCORES


# What a run needs beyond the project itself (the `mutation` extra), by the name it is imported as.
REQUIREMENTS = ("cosmic_ray", "coverage", "pytest_cov")


def check_requirements() -> None:
    """Stop in one line naming what is missing, before the first map's run fails on it as if the tests had failed."""
    import importlib.util

    missing = [name for name in REQUIREMENTS if importlib.util.find_spec(name) is None]
    if missing:
        raise SystemExit(f"tools/mutation.py needs {', '.join(missing)}: pip install -e '.[mutation]'")


def main(argv=None) -> int:
    """Run the command line; see the module doc."""
    parser = argparse.ArgumentParser(prog="python tools/mutation.py", description=__doc__.splitlines()[0])
    # --sample and --measure are read with int, not yacht_env.option_values: the tool imports none of the packages it
    # mutates, since its --run-tests runs on a mutated copy of them, where a mutant could break the tool itself
    parser.add_argument("modules", nargs="*", help=f"modules to mutate (default: every module of {', '.join(PACKAGES)})")
    parser.add_argument(
        "--retest-survivors", action="store_true", help="test the survivors again (after new tests), but the equivalent ones"
    )
    parser.add_argument(
        "--unexplained", action="store_true", help="with --retest-survivors: only the survivors no reason explains yet"
    )
    parser.add_argument(
        "--report", action="store_true", help=f"only rewrite {RESULTS.relative_to(ROOT)} and {SCORES.relative_to(ROOT)}"
    )
    parser.add_argument("--restart", action="store_true", help="start the modules' sessions over (after the module changed)")
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="test a random sample of N mutants of each module (the same ones each run)",
    )
    parser.add_argument("--measure", type=int, metavar="N", help="time N mutants of each module, not kept")
    parser.add_argument("--before", action="store_true", help="with --measure: time them as before the map too")
    parser.add_argument("--run-tests", metavar="MODULE", help=argparse.SUPPRESS)  # the test command of one mutant
    args = parser.parse_args(argv)
    if args.unexplained and not args.retest_survivors:
        parser.error("--unexplained goes with --retest-survivors")
    if args.run_tests:
        return run_tests(check_modules([args.run_tests])[0])
    modules = check_modules(args.modules)
    check_requirements()
    WORK.mkdir(exist_ok=True)
    if args.measure is not None:
        refresh_tree()
        for module in modules:
            run_module(module, retest_survivors=False, restart=False, execute_pending=False)
            measure(module, args.measure, args.before)
        return 0
    if not args.report:
        refresh_tree()
        for module in modules:
            run_module(module, args.retest_survivors, args.restart, sample=args.sample, unexplained=args.unexplained)
            print(f"report: {write_report(discover_modules())}", flush=True)
    print(f"report: {write_report(discover_modules())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
