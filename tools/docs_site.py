"""What the documentation site adds to MkDocs: the docstrings' Sphinx roles as links, and no public object undocumented.

The docstrings are Markdown (Gymnasium's ``## Description`` sections, ````code```` spans) with Sphinx
cross-reference roles (``:class:`~yacht_env.rules.RuleSet```). :class:`SphinxRoles`, a griffe
extension that ``mkdocs.yml`` names, turns each role that names an object of this project into an
autorefs link, which ``mkdocs build --strict`` checks (a renamed object is a broken reference, an
error), and any other role into plain code; it warns, which ``--strict`` makes an error, about every
public function, class or method of the project without a docstring. ``on_page_markdown`` is the
MkDocs hook (also named in ``mkdocs.yml``) that lets pages include files from outside ``docs/`` (the
rule book, the model card) with their relative links still pointing at the right files.
"""

from __future__ import annotations

import builtins
import re
from pathlib import Path

import griffe

PACKAGES = ("yacht_env", "agents", "yacht_play")
ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|exc|obj|const):`(~?)([^`<>]+?)`")
logger = griffe.get_logger("yacht_rl.docs")


def _target(obj: griffe.Object, name: str) -> str | None:
    """The full path of ``name`` as seen from ``obj``, or ``None`` for an object this site does not document.

    A name is looked up in ``obj``'s class or module and then outwards; an imported name is followed to
    where it is defined. A bare name that nothing defines (a renamed or misspelt object) gets a path in
    ``obj``'s module, which ``--strict`` then reports as a missing reference. Private names and objects
    of other libraries are not documented here.
    """
    name = name.strip().lstrip(".")
    root, rest = name.split(".")[0], name.split(".")[1:]
    if name.split(".")[-1].startswith("_"):
        return None
    if root in PACKAGES:
        return name
    scope: griffe.Object | None = obj if (obj.is_module or obj.is_class) else obj.parent
    while scope is not None:
        member = scope.members.get(root)
        if member is not None:
            path = member.target_path if member.is_alias else member.path
            full = ".".join([path, *rest])
            return full if full.split(".")[0] in PACKAGES else None
        scope = scope.parent
    if not rest and not hasattr(builtins, root):
        return f"{obj.module.path}.{name}"
    return None


def _is_public(obj: griffe.Object) -> bool:
    return all(not part.startswith("_") or (part.startswith("__") and part.endswith("__")) for part in obj.path.split("."))


class SphinxRoles(griffe.Extension):
    """Sphinx roles in docstrings become cross-references; a public object without a docstring is a warning."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        """Once a package is loaded (every member known): rewrite each docstring's roles, warn about missing docstrings."""
        if pkg.name in PACKAGES:
            self._visit(pkg)

    def _visit(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(lambda match: self._link(obj, match), obj.docstring.value)
        elif (
            (obj.is_function or obj.is_class)
            and _is_public(obj)
            and not obj.name.startswith("__")
            and not (obj.is_function and any(str(decorator.value).endswith("override") for decorator in obj.decorators))
        ):
            logger.warning(f"{obj.relative_filepath}:{obj.lineno}: public {obj.kind.value} {obj.path} has no docstring")
        for member in obj.members.values():
            if not member.is_alias and isinstance(member, griffe.Object):
                self._visit(member)

    @staticmethod
    def _link(obj: griffe.Object, match: re.Match) -> str:
        short, name = match.group(1) == "~", match.group(2).strip()
        shown = name.split(".")[-1] if short else name
        path = _target(obj, name)
        if path is None:
            return f"`{shown}`"
        return f"[`{shown}`][{path}]"


INCLUDE = re.compile(r'^--8<-- "([^"]+)"$', re.M)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """A line ``--8<-- "PATH"`` is the file at PATH (from the repository root), its links to ``docs/`` made the site's.

    The rule book and the model card live outside ``docs/`` (GitHub shows them where they are); their
    images (``../docs/x.png`` in ``models/README.md``) point at ``docs/``, the site's root.
    """

    def include(match: re.Match) -> str:
        text = (Path(config["config_file_path"]).parent / match.group(1)).read_text(encoding="utf-8")
        return text.replace("](../docs/", "](").replace("](docs/", "](")

    return INCLUDE.sub(include, markdown)
