"""The pinned test and docs toolchain: ``constraints.txt``, refreshed from today's releases in a fresh environment.

``pyproject.toml`` asks for ranges (``numpy>=1.24``); CI and the README's commands install with
``pip install -c constraints.txt``, so what they get is what last passed, and a release upstream changes
nothing until the pins are refreshed on purpose:

    python tools/pins.py            # a fresh virtual environment, the README's install, pip freeze -> constraints.txt

then run ``.ci/run`` and commit ``constraints.txt`` if it passes. The pins are read off one platform
(CI's: Linux x86_64, the CPython that runs this script) and apply there; ``tests/test_dependencies.py``
fails when a requirement of ``pyproject.toml`` has no pin or a pin outside its range.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
# torch's CPU build: a local version label (2.13.0+cpu) that a CUDA build or another index does not carry.
TORCH = "torch==2.13.0"
PROJECT = "yacht-rl"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


def pin_line(line: str) -> str | None:
    """A ``pip freeze`` line as a pin (``name==version`` without a local label), or None for the project itself."""
    match = PIN.match(line.strip())
    if match is None:
        raise ValueError(f"not a pinned requirement from pip freeze: {line.strip()!r}")
    name, version = match.groups()
    if name.lower().replace("_", "-") == PROJECT:
        return None
    return f"{name}=={version.split('+')[0]}"


def frozen(python: Path) -> list[str]:
    """What ``pip freeze`` lists in the environment of ``python``, editable installs left out."""
    lines = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--exclude-editable"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    pins = [pin_line(line) for line in lines if line.strip() and not line.startswith("#")]
    return sorted((pin for pin in pins if pin is not None), key=lambda pin: pin.split("==")[0].lower())


def header() -> str:
    """The file's first lines: what it is, how it was made and how to refresh it."""
    today = datetime.date.today().isoformat()
    return (
        "# Pins of every package the README's install brings: pip install -c constraints.txt ...\n"
        f"# Read off a fresh environment on {today} (Python {platform.python_version()}, {sys.platform} {platform.machine()}).\n"
        "# Refresh: python tools/pins.py (then .ci/run); pyproject.toml keeps the ranges.\n"
    )


def main() -> None:
    """Build the fresh environment, install as the README does, and write its pins."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CONSTRAINTS, help="where to write the pins (default constraints.txt)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = Path(folder) / "venv"
        venv.create(env, with_pip=True)
        python = env / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", TORCH, "-e", f"{ROOT}[all]"], check=True)
        pins = frozen(python)
    partial = args.out.with_name(args.out.name + ".partial")
    partial.write_text(header() + "\n".join(pins) + "\n")
    partial.replace(args.out)  # a refresh cut short leaves the old pins whole
    print(f"{len(pins)} pins written to {args.out}")


if __name__ == "__main__":
    main()
