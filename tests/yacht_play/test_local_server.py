"""``yacht serve`` in a subprocess (yacht_play.serve.local_server): what it is started with before it starts.

Starting it, killing it and starting it again are the serve tests' own (``tests/yacht_play/serve_support.py``).
"""

from __future__ import annotations

import pytest

from yacht_play.serve.local_server import LocalServer


def test_a_server_on_a_database_file_logs_beside_it_on_a_port_of_its_own(tmp_path):
    server = LocalServer(tmp_path / "games.db")
    assert server.log == tmp_path / "games.log"
    assert server.url == f"http://127.0.0.1:{server.port}" and server.port > 0
    assert LocalServer(tmp_path / "games.db", port=8123).url == "http://127.0.0.1:8123"


def test_a_server_on_a_database_url_needs_a_log_file(tmp_path):
    with pytest.raises(ValueError, match=r"database URL 'postgresql://postgres@127\.0\.0\.1:5432/postgres' needs log=FILE"):
        LocalServer("postgresql://postgres@127.0.0.1:5432/postgres")
    assert LocalServer("postgresql://postgres@127.0.0.1:5432/postgres", log=tmp_path / "serve.log").log == tmp_path / "serve.log"
