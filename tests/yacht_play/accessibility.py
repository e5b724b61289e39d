"""axe-core in the browser tests: the violations of a page, by the WCAG 2 A/AA rules and axe's best practices.

axe-core comes bundled in the ``axe-playwright-python`` wheel (nothing is downloaded at test time). It is
evaluated in the page through the DevTools protocol, which a page's Content-Security-Policy does not govern,
so the pages are checked under the policy they are served with.
"""

from __future__ import annotations

from collections import Counter

import pytest

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
BLOCKING = ("serious", "critical")  # a violation of these impacts fails a test


def axe_script() -> str:
    """The text of axe.min.js from the ``axe-playwright-python`` wheel, or a skip saying how to install it."""
    try:
        from axe_playwright_python.base import AXE_SCRIPT
    except ImportError:
        pytest.skip("the accessibility checks need axe-core: pip install axe-playwright-python (the test extra)")
    return AXE_SCRIPT


def violations(page) -> list[dict]:
    """axe's violations on ``page`` as it is now: each with ``id``, ``impact``, ``help`` and its ``nodes``."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_script())
    results = page.evaluate("(tags) => window.axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return results["violations"]


def by_impact(found: list[dict]) -> dict[str, int]:
    """How many elements fail, by impact (``{"serious": 7, ...}``)."""
    counts: Counter[str] = Counter()
    for violation in found:
        counts[violation["impact"] or "none"] += len(violation["nodes"])
    return dict(counts)


def described(found: list[dict]) -> str:
    """One line per violation: its impact, rule, help text, and the first few elements it names."""
    lines = []
    for violation in found:
        targets = ", ".join(str(node["target"]) for node in violation["nodes"][:4])
        lines.append(f"{violation['impact']}: {violation['id']} ({violation['help']}) x{len(violation['nodes'])}: {targets}")
    return "\n".join(lines)


def assert_accessible(page, where: str, also: tuple[str, ...] = ()) -> list[dict]:
    """Fail when axe finds a serious or critical violation on ``page`` (``where`` names the page in the message), or
    one of the rules ``also`` names (their ids: ``"page-has-heading-one"``) whatever its impact; the violations of
    lesser impact are returned, for a test to report.
    """
    found = violations(page)
    blocking = [v for v in found if v["impact"] in BLOCKING or v["id"] in also]
    assert not blocking, f"axe on {where}: {by_impact(found)}\n{described(blocking)}"
    return found
