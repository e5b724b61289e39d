"""The documentation's examples under test: every Python and shell block of ``docs/`` runs, except ``notest`` ones.

Python blocks run through pytest-markdown-docs (``{.python notest}`` skips one, in the brace form
that Material for MkDocs renders); shell blocks (``bash``) run here, each line a command. Blocks
marked ``notest`` are the long-running ones (training for minutes, servers that run until stopped,
clusters): ``tests/test_docs.py`` lists and counts them. Every example runs in one folder outside the
repository, where ``configs/``, ``models/``, ``examples/`` and ``train.py`` are links to the clone, as
a reader who cloned the project runs them; what they write stays there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.docs_blocks import ROOT, CodeBlock, code_blocks, shell_commands

LINKED = ("configs", "models", "examples", "benchmarks", "train.py", "RULES.md")


def pytest_collect_file(file_path: Path, parent):
    """Each Markdown page of ``docs/``: its shell blocks (here) and its Python blocks (pytest-markdown-docs)."""
    if file_path.suffix == ".md" and not parent.config.option.markdowndocs:
        return DocsPage.from_parent(parent, path=file_path)
    return None


class DocsPage(pytest.File):
    """One page: a test per shell block, and the page's Python blocks as pytest-markdown-docs collects them."""

    def collect(self):
        """The shell blocks not marked ``notest`` and the Python blocks (the plugin's items), in the page's order."""
        items = [
            (block.line, ShellBlock.from_parent(self, name=f"bash-line-{block.line}", block=block))
            for block in code_blocks(self.path)
            if block.language == "bash" and not block.long_running
        ]
        try:
            from pytest_markdown_docs.plugin import MarkdownTextFile
        except ImportError:  # the docs extra is not installed: the Python blocks are skipped, and say so
            items.append((0, MissingPluginItem.from_parent(self, name="python-blocks")))
        else:
            python = MarkdownTextFile.from_parent(self, path=self.path, name="python")
            items += [(item.test_definition.start_line, item) for item in python.collect()]
        for _, item in sorted(items, key=lambda pair: pair[0]):
            yield item


def pytest_runtest_setup(item):
    """Run every docs example in the examples' folder (the teardown below goes back)."""
    item.config._docs_previous_folder = os.getcwd()
    os.chdir(item.config._docs_folder)


def pytest_runtest_teardown(item):
    """Back to the folder pytest started in."""
    os.chdir(item.config._docs_previous_folder)


class MissingPluginItem(pytest.Item):
    """Skips, naming the extra that runs the page's Python blocks."""

    def runtest(self):
        """Skip with the reason."""
        pytest.skip('the docs\' Python blocks need pytest-markdown-docs: pip install -e ".[docs]"')


class ShellBlock(pytest.Item):
    """One shell block: its commands run in order in the examples' folder; each must succeed."""

    def __init__(self, *, block: CodeBlock, **kwargs):
        super().__init__(**kwargs)
        self.block = block

    def runtest(self):
        """Run each command of the block; fail on the first that exits non-zero or prints a traceback."""
        folder = self.session.config._docs_folder
        environment = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        for command in shell_commands(self.block):
            result = subprocess.run(
                ["bash", "-c", command], cwd=folder, capture_output=True, text=True, timeout=600, env=environment
            )
            if result.returncode != 0 or "Traceback" in result.stderr:
                raise ShellBlockFailed(command, result)

    def repr_failure(self, excinfo, style=None):
        """The failed command, its exit status and the end of its output."""
        if isinstance(excinfo.value, ShellBlockFailed):
            command, result = excinfo.value.args
            output = f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
            return f"{self.path.name}:{self.block.line}: {command}\nexit {result.returncode}\n{output}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        """Where the block is."""
        return self.path, self.block.line, f"{self.path.name}:{self.block.line}: {shlex.quote(self.block.source[:60])}"


class ShellBlockFailed(Exception):
    """A command of a shell block failed."""


def pytest_configure(config):
    """The pages mark options as Material for MkDocs reads them: ```{.python notest}```."""
    if hasattr(config.option, "markdowndocs_syntax"):
        config.option.markdowndocs_syntax = "superfences"


def pytest_collection_finish(session):
    """Make the examples' folder once, before any example runs."""
    folder = Path(tempfile.mkdtemp(prefix="yacht-docs-examples-"))
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    session.config._docs_folder = folder


def pytest_unconfigure(config):
    """Remove the examples' folder and what the examples wrote in it."""
    folder = getattr(config, "_docs_folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
