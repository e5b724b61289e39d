"""The store of games stands below the server: the server, the report and the simulated people all stand on it,
and nothing outside ``yacht_play.serve`` but the ``yacht`` command imports the server."""

from __future__ import annotations

from tests.test_layers import import_graph

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
