"""Optional dependencies: a missing one is named with the extra that installs it, in one line.

The core install (``pip install yacht-rl``) plays, solves and evaluates; training, the PettingZoo env,
the browser game and the report need packages that the extras of ``pyproject.toml`` bring. A module
that needs one imports it inside :func:`needs_extra`:

>>> with needs_extra("multiplayer"):
...     import numpy  # stands for pettingzoo here: numpy is always installed

so that on an install without it the import fails with :class:`MissingExtraError`, whose one-line message
names the missing package and the command that installs it, instead of a bare ``No module named ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# The optional-dependencies of pyproject.toml (tests/test_dependencies.py holds the two lists together).
EXTRAS = (
    "train",
    "multiplayer",
    "distributed",
    "render",
    "video",
    "torchrl",
    "serve",
    "benchmark",
    "test",
    "docs",
    "mutation",
    "all",
)
PROJECT_PACKAGES = ("yacht_env", "agents", "yacht_play")


class MissingExtraError(ImportError):
    """An optional package is not installed; the message names it and the extra that installs it."""


def install_command(extra: str) -> str:
    """The command that installs ``extra``, as the README writes it."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}: one of {', '.join(EXTRAS)}")
    return f"pip install 'yacht-rl[{extra}]'"


@contextmanager
def needs_extra(extra: str) -> Iterator[None]:
    """Turn a missing third-party module imported inside the block into :class:`MissingExtraError`.

    A module of this project that is missing is a broken install, not a missing extra, and is raised as it
    is; so is an ``ImportError`` that is not a missing module (a name a package no longer has).
    """
    command = install_command(extra)
    try:
        yield
    except ModuleNotFoundError as error:
        package = (error.name or "").split(".")[0]
        if not package or package in PROJECT_PACKAGES:
            raise
        raise MissingExtraError(f"{package} is not installed; it comes with the {extra} extra: {command}", name=package) from None
