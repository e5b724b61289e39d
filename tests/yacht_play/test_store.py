"""The store of games stands below the server: the server, the report and the simulated people all stand on it,
nothing outside ``yacht_play.serve`` but the ``yacht`` command imports the server, and the store's old name
(``yacht_play.serve.db``) still imports, as the same module, with a deprecation warning."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.test_layers import ROOT, import_graph

COMMAND = "yacht_play.cli"  # the ``yacht`` command: it dispatches to every subcommand, the server's too


def test_nothing_below_the_command_imports_the_server():
    wrong = sorted(
        (name, target)
        for name, targets in import_graph().items()
        for target in targets
        if target.startswith("yacht_play.serve") and not name.startswith("yacht_play.serve") and name != COMMAND
    )
    assert wrong == []


def test_the_server_the_report_and_the_simulated_people_share_one_store():
    graph = import_graph()
    for name in (
        "yacht_play.serve.games",
        "yacht_play.serve.app",
        "yacht_play.serve.cli",
        "yacht_play.report.command",
        "yacht_play.simulate",
    ):
        assert "yacht_play.store" in graph[name], name


def test_the_old_name_of_the_store_is_the_same_module_and_warns():
    pytest.importorskip("sqlalchemy", reason="the store needs the serve extra: pip install 'yacht-rl[serve]'")
    check = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from yacht_play.serve import db\n"
        "import yacht_play.store\n"
        "assert db is yacht_play.store, db\n"
        "assert [w.category for w in caught] == [DeprecationWarning], caught\n"
        "assert 'yacht_play.store' in str(caught[0].message)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
