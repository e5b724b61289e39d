"""``yacht serve``, ``export`` and ``import`` on the command line (yacht_play.serve.cli): the options' bounds, the
one-line refusals with status 2, and the defaults shared with the server's modules."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("uvicorn")

from tests.yacht_play.test_serve_defaults import started  # noqa: E402, F401  (a fixture)
from yacht_env.echo import echoed  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.serve import app, cli, heads  # noqa: E402


def test_the_defaults_are_those_of_the_server_s_own_modules():
    """The command line cannot import the server (its extra may be missing): its copies must agree with it."""
    assert (cli.MAX_HEADER_BYTES, cli.MAX_HEADERS, cli.HEADER_TIMEOUT) == (
        heads.MAX_HEADER_BYTES,
        heads.MAX_HEADERS,
        heads.HEADER_TIMEOUT,
    )
    assert (cli.NEW_GAMES_PER_MINUTE, cli.BODY_TIMEOUT) == (app.NEW_GAMES_PER_MINUTE, app.BODY_TIMEOUT)


def serve(tmp_path, *options: str) -> int:
    return main(["serve", "--db", str(tmp_path / "yacht.db"), "--agents", "greedy", *options])


@pytest.mark.parametrize(
    "option, highest_or_lowest, one_past",
    [("--port", "65535", "65536"), ("--max-header-bytes", "1", "0"), ("--max-headers", "1", "0")],
)
def test_a_bound_is_taken_and_one_past_it_refused(started, tmp_path, capsys, option, highest_or_lowest, one_past):  # noqa: F811
    assert serve(tmp_path, option, highest_or_lowest) == 0
    with pytest.raises(SystemExit) as exit_info:
        serve(tmp_path, option, one_past)
    assert exit_info.value.code == 2 and option in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--header-timeout", "--body-timeout"])
def test_a_timeout_is_any_finite_number_of_seconds_above_0(started, tmp_path, capsys, option):  # noqa: F811
    assert serve(tmp_path, option, "0.5") == 0
    for value in ("0", "0.0"):  # infinity is refused as it is read
        assert serve(tmp_path, option, value) == 2
        assert capsys.readouterr().err.endswith(f"yacht serve: {option} {float(value):g} is not above 0 (and finite)\n")


def test_proxies_are_addresses_networks_or_every_peer(started, tmp_path, capsys):  # noqa: F811
    assert serve(tmp_path, "--forwarded-allow-ips", "*") == 0
    assert started["forwarded_allow_ips"] == ["*"] and started["proxy_headers"] is True
    assert serve(tmp_path, "--forwarded-allow-ips", " 10.0.0.0/8, ::1 ,") == 0
    assert started["forwarded_allow_ips"] == ["10.0.0.0/8", "::1"]
    assert serve(tmp_path) == 0  # none by default: the headers are not believed
    assert started["forwarded_allow_ips"] is None and started["proxy_headers"] is False
    for bad in ("proxy", "#1", "!", "\x1b[2J" + "x" * 100):  # also names that sort before "*"
        assert serve(tmp_path, "--forwarded-allow-ips", f"10.0.0.1,{bad}") == 2
        said = capsys.readouterr().err
        assert f"yacht serve: --forwarded-allow-ips: {echoed(bad)} is not an IP address or network" in said
        assert "\x1b" not in said


def test_serving_no_agent_says_so_while_loading(started, tmp_path, capsys):  # noqa: F811
    assert main(["serve", "--db", str(tmp_path / "yacht.db"), "--agents", " , "]) == 0
    assert started["agents"] == [] and "yacht serve: loading agents (none) ..." in capsys.readouterr().err


@pytest.mark.parametrize("command, missing", [("serve", "uvicorn"), ("export", "sqlalchemy"), ("import", "sqlalchemy")])
def test_without_the_serve_extra_each_command_names_it_with_status_2(tmp_path, capsys, monkeypatch, command, missing):
    import yacht_play

    monkeypatch.setitem(sys.modules, missing, None)  # as where the extra is not installed
    monkeypatch.delitem(sys.modules, "yacht_play.store")  # imported afresh, without it
    monkeypatch.delattr(yacht_play, "store")
    files = [str(tmp_path / "games.jsonl")] if command == "import" else []
    assert main([command, *files, "--db", str(tmp_path / "yacht.db")]) == 2
    assert capsys.readouterr().err == (
        f"yacht: this command needs the serve extra ({missing} is missing): pip install 'yacht-rl[serve]'\n"
    )


def test_export_writes_to_a_file_whose_name_sorts_before_the_dash(tmp_path, capsys, monkeypatch):
    from yacht_play import store

    monkeypatch.chdir(tmp_path)
    store.connect("yacht.db")
    assert main(["export", "--db", "yacht.db", "-o", "+games.jsonl"]) == 0
    assert (tmp_path / "+games.jsonl").read_text() == "" and capsys.readouterr().out == ""


@pytest.mark.parametrize("database", ["absent", "not a database", "a name too long"])
def test_export_from_a_database_it_cannot_read_says_so_with_status_2(tmp_path, capsys, database):
    path = tmp_path / ("n" * 5000 if database == "a name too long" else "yacht.db")  # past the system's NAME_MAX
    if database == "not a database":
        path.write_bytes(b"these bytes are no SQLite file" * 100)
    assert main(["export", "--db", str(path)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("yacht export: ") and said.count("\n") == 1
    if database != "not a database":  # no file there: said before any open, the name cut to its first 200 characters
        assert said.startswith("yacht export: no database at ") and len(said) < 400


def test_serve_on_a_database_it_cannot_open_says_so_with_status_2(started, tmp_path, capsys):  # noqa: F811
    path = tmp_path / "yacht.db"
    path.write_bytes(b"these bytes are no SQLite file" * 100)
    assert main(["serve", "--db", str(path), "--agents", "greedy"]) == 2
    said = capsys.readouterr().err
    assert said.startswith("yacht serve: ") and said.count("\n") == 1 and "port" not in started


def test_an_import_the_service_refuses_imports_nothing_with_status_2(tmp_path, capsys, monkeypatch):
    from tests.yacht_play.test_imported_games import played_in_order, write_lines
    from yacht_play.match import Match, Player
    from yacht_play.serve import games

    good = write_lines(tmp_path / "good.jsonl", played_in_order(Match.new([Player("ann")], seed=3)).game_record().lines())

    def refuses(self, game):
        raise games.Refused("its seat names a player twice")

    monkeypatch.setattr(games.GameService, "import_game", refuses)
    assert main(["import", str(good), "--db", str(tmp_path / "yacht.db")]) == 2
    assert capsys.readouterr().err == f"yacht import: {good}:1: its seat names a player twice; nothing was imported\n"


def test_an_import_that_cannot_be_read_or_stored_imports_nothing_with_status_2(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["import", str(bad), "--db", str(tmp_path / "yacht.db")]) == 2
    assert capsys.readouterr().err.endswith("; nothing was imported\n")
    from sqlalchemy.exc import OperationalError

    from tests.yacht_play.test_imported_games import played_in_order, write_lines
    from yacht_play.match import Match, Player
    from yacht_play.serve import games

    good = write_lines(tmp_path / "good.jsonl", played_in_order(Match.new([Player("ann")], seed=3)).game_record().lines())

    def refuses(self, game):
        raise OperationalError("INSERT", {}, Exception("database is locked"))

    first_line = str(OperationalError("INSERT", {}, Exception("database is locked"))).splitlines()[0]
    monkeypatch.setattr(games.GameService, "import_game", refuses)
    assert main(["import", str(good), "--db", str(tmp_path / "yacht.db")]) == 2
    said = capsys.readouterr().err
    assert said == f"yacht import: the database refused the import ({first_line}); nothing was imported\n"


def test_an_import_counts_the_games_added_and_those_already_there(tmp_path, capsys):
    from tests.yacht_play.test_imported_games import played_in_order, write_lines
    from yacht_play.match import Match, Player

    games = [
        played_in_order(Match.new([Player(name)], seed=seed)).game_record().lines() for name, seed in (("ann", 3), ("bo", 4))
    ]
    first = write_lines(tmp_path / "first.jsonl", games[0])
    both = write_lines(tmp_path / "both.jsonl", games[0] + games[1])
    database = str(tmp_path / "yacht.db")
    assert main(["import", str(first), "--db", database]) == 0
    assert capsys.readouterr().err.startswith("yacht import: 1 games added, 0 already in the database (marked imported")
    assert main(["import", str(both), "--db", database]) == 0
    assert capsys.readouterr().err.startswith("yacht import: 1 games added, 1 already in the database")
    assert main(["import", str(first), "--db", database]) == 0
    assert capsys.readouterr().err == "yacht import: 0 games added, 1 already in the database\n"
