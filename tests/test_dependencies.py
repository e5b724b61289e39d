"""Every import declared where it is needed, a missing extra named in one line, and pins that agree with pyproject.toml.

deptry (in ``.ci/run``) checks that each third-party import is declared somewhere in ``pyproject.toml``; these
tests check what it cannot: that the packages import none of the developers' extras, that a module whose
optional package is missing names the extra that installs it, and that ``constraints.txt`` pins every
requirement inside its range.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import time
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from yacht_env.extras import EXTRAS, PROJECT_PACKAGES, MissingExtraError, install_command, needs_extra

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "yacht-rl"
DEVELOPER_EXTRAS = ("test", "docs", "mutation")  # [tool.deptry] optional_dependencies_dev_groups


@cache
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirements(extra: str | None) -> list[Requirement]:
    """The requirements of the core install (``None``) or of one extra, the extras it names followed."""
    project = pyproject()["project"]
    listed = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    found = []
    for line in listed:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == PROJECT:
            for named in sorted(requirement.extras):
                found += requirements(named)
        else:
            found.append(requirement)
    return found


def distributions(extra: str | None) -> set[str]:
    return {canonicalize_name(requirement.name) for requirement in requirements(extra)}


@cache
def installed_modules() -> dict[str, list[str]]:
    """Each top-level module of the installed distributions and the distributions that provide it (a scan of every
    installed distribution's files: taken once, not once per import)."""
    return packages_distributions()


def distribution_of(module: str) -> set[str]:
    """The installed distributions that provide the top-level module ``module`` (``yaml`` -> ``pyyaml``)."""
    return {canonicalize_name(name) for name in installed_modules().get(module, [])}


def module_level_imports(path: Path) -> set[str]:
    """The top-level names a module imports when it is imported (not inside functions, not for type checking only)."""
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body + node.orelse)
            elif isinstance(node, (ast.Try, ast.With)):
                visit(node.body)

    visit(ast.parse(path.read_text()).body)
    return found


def all_imports(path: Path) -> set[str]:
    """Every top-level name a module imports, wherever the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def package_modules() -> list[Path]:
    return sorted(path for package in PROJECT_PACKAGES for path in (ROOT / package).rglob("*.py"))


def third_party(names: set[str]) -> set[str]:
    return {name for name in names if name not in sys.stdlib_module_names and name not in (*PROJECT_PACKAGES, "__future__")}


def optional_modules() -> list[str]:
    """The third-party modules that some module of the packages imports on import and the core install lacks."""
    core = distributions(None)
    imported = set().union(*(third_party(module_level_imports(path)) for path in package_modules()))
    return sorted(name for name in imported if not distribution_of(name) & core)


def extras_providing(module: str) -> set[str]:
    """The extras (not ``all``) that install the distribution of ``module``."""
    provided = distribution_of(module)
    extras = pyproject()["project"]["optional-dependencies"]
    return {extra for extra in extras if extra != "all" and distributions(extra) & provided}


def test_the_extras_named_in_code_are_the_extras_of_pyproject():
    assert set(EXTRAS) == set(pyproject()["project"]["optional-dependencies"])


def test_the_packages_import_only_what_an_install_for_users_declares():
    # deptry counts the developers' extras as declared for tools/ too; the packages must not lean on them.
    extras = pyproject()["project"]["optional-dependencies"]
    users = distributions(None).union(*(distributions(extra) for extra in extras if extra not in (*DEVELOPER_EXTRAS, "all")))
    undeclared = {}
    for path in package_modules():
        for module in third_party(all_imports(path)):
            provided = distribution_of(module)
            assert provided, f"{path.relative_to(ROOT)} imports {module}, which no installed distribution provides"
            if not provided & users:
                undeclared[str(path.relative_to(ROOT))] = module
    assert undeclared == {}


# One fresh interpreter per blocked module: the import system is told that the module does not exist, and every
# module of the packages is imported; each must import, or fail with MissingExtraError (and nothing else).
IMPORT_ALL = """
import importlib, importlib.abc, json, sys
from pathlib import Path
blocked, root, names = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == blocked or name.startswith(blocked + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from yacht_env.extras import MissingExtraError
outcome = {}
for name in names:
    try:
        importlib.import_module(name)
        outcome[name] = None
    except MissingExtraError as error:
        outcome[name] = ["missing", str(error)]
    except BaseException as error:
        outcome[name] = ["other", f"{type(error).__name__}: {error}"]
print(json.dumps(outcome))
"""


def module_names() -> list[str]:
    names = []
    for path in package_modules():
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.parametrize("blocked", optional_modules())
def test_a_missing_optional_package_names_the_extra_that_installs_it_in_one_line(blocked):
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, blocked, str(ROOT), json.dumps(module_names())],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.splitlines()[-1])
    others = {name: result[1] for name, result in outcome.items() if result and result[0] == "other"}
    assert others == {}, f"without {blocked}, these modules fail without naming an extra"
    messages = {result[1] for result in outcome.values() if result}
    assert messages, f"no module needs {blocked} on import: it should not be in the list of optional imports"
    allowed = extras_providing(blocked)
    assert allowed, f"{blocked} is imported by the packages but no extra declares it"
    for message in messages:
        assert "\n" not in message
        named = re.fullmatch(r"(\S+) is not installed; it comes with the (\w+) extra: pip install 'yacht-rl\[(\w+)\]'", message)
        assert named, message
        assert named[1] == blocked and named[2] == named[3] and named[2] in allowed, (message, allowed)


def test_the_pettingzoo_env_without_pettingzoo_says_which_extra_to_install():
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, "pettingzoo", str(ROOT), json.dumps(["yacht_env.yacht_v0", "yacht_env"])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    outcome = json.loads(run.stdout.splitlines()[-1])
    assert outcome == {
        "yacht_env.yacht_v0": [
            "missing",
            "pettingzoo is not installed; it comes with the multiplayer extra: pip install 'yacht-rl[multiplayer]'",
        ],
        "yacht_env": None,  # the Gymnasium envs need nothing optional
    }


def test_needs_extra_passes_on_what_is_not_a_missing_optional_package():
    with pytest.raises(ModuleNotFoundError) as own:
        with needs_extra("train"):
            raise ModuleNotFoundError("No module named 'agents.gone'", name="agents.gone")
    assert not isinstance(own.value, MissingExtraError)  # a broken install of the project itself, shown as it is
    with pytest.raises(ImportError, match="cannot import name") as renamed:
        with needs_extra("train"):
            raise ImportError("cannot import name 'Gone' from 'numpy'", name="numpy")
    assert not isinstance(renamed.value, MissingExtraError)
    with pytest.raises(MissingExtraError, match=r"^yaml is not installed; it comes with the train extra: ") as missing:
        with needs_extra("train"):
            raise ModuleNotFoundError("No module named 'yaml.cyaml'", name="yaml.cyaml")
    assert missing.value.name == "yaml"


def test_an_unknown_extra_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown extra 'trian': one of train, multiplayer, "):
        install_command("trian")
    assert install_command("serve") == "pip install 'yacht-rl[serve]'"


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            found[canonicalize_name(name)] = version
    return found


def test_every_requirement_of_pyproject_is_pinned_inside_its_range():
    # What the README installs: the core and the extras of `all` (the mutation tool's extra is installed by hand).
    pinned = pins()
    disagree = []
    for requirement in requirements(None) + requirements("all"):
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # not installed on this platform, so not read off it
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            disagree.append(f"{requirement} pinned at {version}")
    assert disagree == []


def test_pins_are_plain_versions_without_local_labels():
    # torch's CPU build is 2.13.0+cpu here and 2.13.0 on other indexes: the pin must match both.
    for name, version in pins().items():
        assert re.fullmatch(r"[0-9][0-9A-Za-z.!]*", version), (name, version)


def quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quickstart)


def test_ci_runs_the_readme_test_command_with_the_pins():
    install, test = quickstart_commands()[1].split(" && ")
    assert "-c constraints.txt" in install
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install in ci and test in ci
    assert ci.index(install) < ci.index(test)


def test_a_test_that_hangs_fails_at_the_timeout_under_the_project_s_own_settings(tmp_path):
    """pytest-timeout (the test extra) is active with pyproject.toml's settings, -n auto included: a hang ends in a
    failure naming the test, not in a run that waits until CI's limit (the project's 600 s made 2 s here)."""
    (tmp_path / "test_hang.py").write_text("import time\n\n\ndef test_hangs():\n    time.sleep(120)\n")
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "-p", "no:cacheprovider"]
        + ["-n", "1", "-o", "timeout=2", str(tmp_path / "test_hang.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=100,
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "Timeout (>2.0s" in run.stdout and "FAILED" in run.stdout and "test_hangs" in run.stdout
    assert time.monotonic() - started < 90
    assert pyproject()["tool"]["pytest"]["ini_options"]["timeout"] == 600
