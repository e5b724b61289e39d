"""The code blocks of the documentation (``docs/**/*.md``): what runs, what is marked long-running, what a shell line is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN = {"python", "bash"}  # executed by the test suite (docs/conftest.py), unless marked notest
SHOWN = {"text", "yaml", "bibtex"}  # output, file contents, a citation: shown, never executed
LONG_RUNNING = "notest"  # pytest-markdown-docs' own word for a block it must not run


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its page, the line of its opening fence (1-based), its language, options and text."""

    path: Path
    line: int
    language: str
    options: frozenset[str]
    source: str

    @property
    def long_running(self) -> bool:
        """Marked as long-running (``{.python notest}``, ``{.bash notest}``): listed and counted, not executed."""
        return LONG_RUNNING in self.options

    @property
    def where(self) -> str:
        """``page.md:line``, the page relative to ``docs/``."""
        return f"{self.path.relative_to(DOCS)}:{self.line}"


def code_blocks(path: Path) -> list[CodeBlock]:
    """The fenced code blocks of one Markdown page, in order (parsed as CommonMark, as the plugin does)."""
    from markdown_it import MarkdownIt

    blocks = []
    for token in MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8")):
        if token.type == "fence" and token.map is not None:
            words = token.info.strip().strip("{}").split()  # ```bash or ```{.bash notest} (the superfences form)
            language = next((word[1:] for word in words if word.startswith(".")), words[0] if words else "")
            options = frozenset(word for word in words if word not in (language, "." + language))
            blocks.append(CodeBlock(path, token.map[0] + 1, language, options, token.content))
    return blocks


def docs_pages() -> list[Path]:
    """Every Markdown page of the site."""
    return sorted(DOCS.rglob("*.md"))


def shell_commands(block: CodeBlock) -> list[str]:
    """The commands of a shell block: continued lines joined, comments dropped."""
    commands, pending = [], ""
    for raw in block.source.splitlines():
        line = raw.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        line = re.split(r"\s+#\s", line)[0].strip()
        if line and not line.startswith("#"):
            commands.append(line)
    return commands
