"""What :mod:`yacht_play.serve.games` promises a person and an operator: names refused in words that say why,
secrets of a fixed strength, agents refused at tables they do not sit at, no server path in any answer, and a
turn's rolls counted."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

import base64  # noqa: E402
import unicodedata  # noqa: E402
import warnings  # noqa: E402

from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from agents.registry import EXACT_TABLES_REFUSAL, POLICIES, PolicySpec, make_policy, rule_sets_without_sheet_state  # noqa: E402
from agents.two_player import SolutionNotComputed  # noqa: E402
from tests.yacht_play.serve_support import ROOT  # noqa: E402
from yacht_env.rules import YACHT, YAHTZEE  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.match import Match, Player  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import SECRET, GameService, Refused, player_name  # noqa: E402

PAIR = "pair"  # an agent of a table of two only, as exact2 is, that builds in no time
TRIO = "trio"  # an agent of tables of 2 and 3 that can be built for 2 players only
# a model by a relative path whose folder sorts after its file name: the page must see only the file name
MODEL = "ppo:zz/ppo.safetensors"


def random_at_table(name, num_players, rules, seed):
    if name == TRIO and num_players == 3:
        raise SolutionNotComputed(f"the solution of {rules.name} for 3 players is not computed yet")
    return make_policy("random", rules=rules, seed=seed)


def table_agent(name: str, table_sizes: tuple[int, int]) -> PolicySpec:
    """A stand-in for an agent of the solved tables (exact2): it reads the totals and plays at random."""
    return PolicySpec(
        name,
        f"at a table of {table_sizes[0]} to {table_sizes[1]}: plays at random",
        solitaire=None,
        table=random_at_table,
        rule_sets=rule_sets_without_sheet_state,
        refusal=EXACT_TABLES_REFUSAL,
        reads_totals=True,
        table_sizes=table_sizes,
    )


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """The server's games with random, two table agents and a model named by a path relative to the server's folder."""
    folder = tmp_path_factory.mktemp("games")
    (folder / "zz").mkdir()
    (folder / "zz" / "ppo.safetensors").symlink_to(ROOT / "models" / "ppo.safetensors")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(POLICIES, PAIR, table_agent(PAIR, (2, 2)))
        patch.setitem(POLICIES, TRIO, table_agent(TRIO, (2, 3)))
        patch.chdir(folder)
        yield GameService(db.connect(str(folder / "yacht.db")), ["random", PAIR, TRIO, MODEL])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        yield client


def new_game(client, mode="solitaire", agents=(), rules=None) -> str:
    body = {"name": "ann", "mode": mode, "agents": list(agents), "coach": False, "rules": rules}
    response = client.post("/api/games", json={k: v for k, v in body.items() if v is not None})
    assert response.status_code == 201, response.text
    return response.json()["secret"]


# white space (a tab, a newline) is collapsed to a space, not refused
REFUSED_CHARACTERS = [chr(c) for c in range(0xE000) if unicodedata.category(chr(c)) in ("Cc", "Cs") and not chr(c).isspace()]


@given(st.sampled_from(REFUSED_CHARACTERS))
@example("\x1b")
@example("\x00")
@example("\ud800")
@example("\udfff")
def test_a_name_with_a_control_character_or_a_lone_surrogate_is_refused_saying_which(char):
    kind = "a lone surrogate" if unicodedata.category(char) == "Cs" else "a control character"
    with pytest.raises(Refused) as refused:
        player_name(f"an{char}n")
    assert str(refused.value) == f"name: {ascii(char)} is {kind}; use letters, digits, spaces and punctuation"
    assert refused.value.status == 400


def test_a_new_game_secret_is_24_random_bytes_in_32_url_safe_characters(client):
    made = [new_game(client) for _ in range(3)]
    for secret in made:
        assert len(secret) == 32 and SECRET.fullmatch(secret)
        assert len(base64.urlsafe_b64decode(secret)) == 24
    assert len(set(made)) == 3


@pytest.mark.parametrize("rules", [None, "yahtzee"])
def test_an_agent_of_a_table_of_two_is_refused_at_a_table_of_three_by_its_table_sizes_first(client, rules):
    """The table's size is checked before the rules: the refusal names the sizes the agent sits at, in one line."""
    body = {"name": "ann", "mode": "table", "agents": [PAIR, "random"], "coach": False}
    response = client.post("/api/games", json=body if rules is None else {**body, "rules": rules})
    assert response.status_code == 400
    assert response.json()["error"] == f"agent {PAIR!r} plays at a table of 2 players; this table has 3"
    assert client.post("/api/games", json={**body, "agents": [PAIR]}).status_code == 201  # a table of two seats it


def test_a_table_agent_that_cannot_be_built_for_the_tables_size_is_refused_in_its_own_line(client):
    """It sits at tables of 2 and 3 but has no solution for 3: creating that table answers 400 saying so, not 500."""
    body = {"name": "ann", "mode": "table", "agents": [TRIO, "random"], "coach": False}
    response = client.post("/api/games", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == "the solution of yacht for 3 players is not computed yet"
    assert client.post("/api/games", json={**body, "agents": [TRIO]}).status_code == 201


def test_a_model_of_other_rules_is_refused_by_its_file_name_never_its_path(client):
    body = {"name": "ann", "mode": "table", "agents": ["ppo:ppo.safetensors"], "coach": False, "rules": "yahtzee"}
    response = client.post("/api/games", json=body)
    error = response.json()["error"]
    assert response.status_code == 400 and "zz/" not in error
    assert error.startswith("agent 'ppo:ppo.safetensors' is a model trained for the yacht rules; this game plays yahtzee")


def test_a_stored_game_its_model_cannot_play_is_a_conflict_that_names_the_model_without_its_path(client, service):
    """A game in the database under rules the offered model does not play: 409, and the page never sees the path."""
    players = [Player("ann"), Player("bot", "agent", MODEL)]
    match = Match.new(players, 5, "table", rules=YAHTZEE, policies={1: make_policy("random", rules=YAHTZEE)})
    secret = "stored-" + "a" * 25
    db.insert_game(service.engine, match.game_id, secret, "ann", match.header)
    response = client.get(f"/api/games/{secret}")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error.startswith(f"game {match.game_id} cannot go on: agent 'ppo:ppo.safetensors' is a model trained for")
    assert "zz/" not in error and "\n" not in error


def test_holding_dice_after_the_last_roll_is_refused_saying_to_score_a_row(client, service):
    secret = new_game(client)
    for seq in (0, 1):  # the second and third rolls
        response = client.post(f"/api/games/{secret}/actions", json={"seq": seq, "hold": [0]})
        assert response.status_code == 200 and response.json()["current"]["rolls_left"] == 1 - seq
    for hold in ([0], [], [1, 2, 3, 4]):
        response = client.post(f"/api/games/{secret}/actions", json={"seq": 2, "hold": hold})
        assert response.status_code == 400 and response.json()["error"] == "no rolls left this turn: score a row"
    assert len(service.live(secret).match.decisions) == 2  # nothing played
    assert client.post(f"/api/games/{secret}/actions", json={"seq": 2, "row": "choice"}).status_code == 200


def first_move_refusal(client, service, secret: str, body: dict) -> str:
    """The error a game's first move ``body`` gets: a 400, with nothing played."""
    response = client.post(f"/api/games/{secret}/actions", json=body)
    assert response.status_code == 400, response.text
    assert service.live(secret).match.decisions == []  # nothing played
    return response.json()["error"]


@pytest.mark.parametrize("move", [{}, {"hold": [0], "row": "choice"}, {"row": "choice", "action": 0}])
def test_a_move_must_say_exactly_one_of_hold_row_and_action(client, service, move):
    secret = new_game(client)
    error = first_move_refusal(client, service, secret, {"seq": 0, **move})
    assert error == "say one of: hold (dice positions to keep, then roll), row (a row to score), action"
    assert client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": "choice"}).status_code == 200


@pytest.mark.parametrize(
    ("move", "error"),
    [
        ({"hold": "0"}, "hold must be a list of dice positions 0..4, got '0'"),
        ({"hold": [True]}, "hold must be a list of dice positions 0..4, got [True]"),
        ({"hold": [1.0]}, "hold must be a list of dice positions 0..4, got [1.0]"),
        ({"hold": [5]}, "hold must name distinct dice positions 0..4, got [5]"),
        ({"hold": [-1]}, "hold must name distinct dice positions 0..4, got [-1]"),
        ({"hold": [2, 2]}, "hold must name distinct dice positions 0..4, got [2, 2]"),
        ({"hold": [0, 1, 2, 3, 4]}, "every die is held: release a die to roll, or score a row"),
        ({"row": "Yacht"}, "row 'Yacht' does not exist; rows are ROWS"),
        ({"action": 44}, "action must be an integer 0..43, got 44"),
        ({"action": -1}, "action must be an integer 0..43, got -1"),
        ({"action": True}, "action must be an integer 0..43, got True"),
        ({"action": "3"}, "action must be an integer 0..43, got '3'"),
    ],
)
def test_a_move_that_cannot_be_played_is_refused_naming_the_value_and_what_is_allowed(client, service, move, error):
    refused = first_move_refusal(client, service, new_game(client), {"seq": 0, **move})
    assert refused == error.replace("ROWS", ", ".join(YACHT.category_names))


@pytest.mark.parametrize("seq", [-1, True, "0", 0.0, None])
def test_a_move_s_seq_must_be_a_count_of_decisions(client, service, seq):
    error = first_move_refusal(client, service, new_game(client), {"seq": seq, "row": "choice"})
    assert error == f"seq must be the number of decisions the page has seen (an integer >= 0), got {seq!r}"


def test_a_move_from_a_page_behind_or_ahead_or_after_the_end_is_a_conflict_saying_so(client, service):
    secret = new_game(client)
    for seq, row in enumerate(YACHT.category_names[:2]):
        assert client.post(f"/api/games/{secret}/actions", json={"seq": seq, "row": row}).status_code == 200
    for seq in (0, 3):  # a decision seen before, other than the one the page made; one the game has not had
        response = client.post(f"/api/games/{secret}/actions", json={"seq": seq, "row": "choice"})
        assert response.status_code == 409
        assert response.json()["error"] == f"the page is behind or ahead: it has seen {seq} decisions, the game has 2; reload"
    for seq, row in enumerate(YACHT.category_names[2:], start=2):
        assert client.post(f"/api/games/{secret}/actions", json={"seq": seq, "row": row}).status_code == 200
    response = client.post(f"/api/games/{secret}/actions", json={"seq": 12, "hold": []})
    assert response.status_code == 409 and response.json()["error"] == "the game is over"
    assert len(service.live(secret).match.decisions) == 12


def test_a_seat_s_agent_shows_by_its_lobby_name_or_without_its_folders_when_not_offered(tmp_path, monkeypatch):
    for folder in ("aa", "bb"):  # two models of the same file name: the lobby numbers the second
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ppo.safetensors").symlink_to(ROOT / "models" / "ppo.safetensors")
    monkeypatch.chdir(tmp_path)
    service = GameService(db.connect(str(tmp_path / "yacht.db")), ["random", "ppo:aa/ppo.safetensors", "ppo:bb/ppo.safetensors"])
    assert service.shown_name(None) is None  # a person
    assert service.shown_name("random") == "random"
    assert service.shown_name("ppo:aa/ppo.safetensors") == "ppo:ppo.safetensors"
    assert service.shown_name("ppo:bb/ppo.safetensors") == "ppo:ppo.safetensors#2"
    assert service.shown_name("ppo:/srv/old/best.zip") == "ppo:best.zip"  # a stored game's agent no longer offered


def test_two_requests_that_both_rebuild_a_game_share_one_lock_and_the_second_is_answered_as_a_replay(
    client, service, monkeypatch
):
    """A game out of memory, asked for twice at once: both requests read its rows before either keeps it. The game
    kept is the first rebuilt, so one lock orders the two, and the same decision sent twice is played once."""
    import threading

    secret = new_game(client)
    service.forget(service.live(secret))
    both_read = threading.Barrier(2, timeout=30)
    real_load = db.load_record

    def load_then_wait(engine, row):
        record = real_load(engine, row)
        both_read.wait()  # neither request keeps its game before the other has read the rows too
        return record

    monkeypatch.setattr(db, "load_record", load_then_wait)
    answers: list = [None, None]

    def send(k: int) -> None:
        try:
            answers[k] = service.act(secret, {"seq": 0, "hold": [0, 1]})
        except Refused as refused:
            answers[k] = refused

    threads = [threading.Thread(target=send, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(isinstance(answer, dict) for answer in answers), answers
    assert sorted(answer["replayed"] for answer in answers) == [False, True]
    monkeypatch.undo()
    assert len(service.live(secret).match.decisions) == 1


def test_a_person_s_history_is_their_200_newest_games_newest_first(tmp_path):
    service = GameService(db.connect(str(tmp_path / "history.db")), ["greedy"])
    started = []
    for number in range(201):  # one game an hour, the first the oldest
        match = Match.new([Player("ann")], number, "solitaire", rules=YACHT)
        match.header["time"] = f"2026-01-{1 + number // 24:02d}T{number % 24:02d}:00:00+00:00"
        db.insert_game(service.engine, match.game_id, f"secret-{number:03d}-" + "b" * 20, "ann", match.header)
        started.append(match.header["time"])
    games = service.history("ann")["games"]
    assert [game["started"] for game in games] == started[::-1][:200]  # the oldest one left out
