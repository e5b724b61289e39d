"""``yacht serve`` through its HTTP API: the server decides, hides the dice to come, refuses bad requests
without changing anything, and keeps every decision in the database before acknowledging it."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time

import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

import warnings  # noqa: E402

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tests.yacht_play.serve_support import ROOT  # noqa: E402
from yacht_env.rules import YACHT  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.match import Match  # noqa: E402
from yacht_play.records import read_records, write_games  # noqa: E402
from yacht_play.serve.app import MAX_BODY, create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    engine = db.connect(str(tmp_path_factory.mktemp("serve") / "yacht.db"))
    return GameService(engine, ["random", "greedy", "optimal"])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        yield client


def new_game(client, mode="solitaire", agents=(), coach=False, name="ann") -> str:
    response = client.post("/api/games", json={"name": name, "mode": mode, "agents": list(agents), "coach": coach})
    assert response.status_code == 201, response.text
    return response.json()["secret"]


def random_choice(view: dict, rng: random.Random) -> dict:
    current = view["current"]
    if current["rolls_left"] > 0 and rng.random() < 0.6:
        return {"hold": sorted(rng.sample(range(5), rng.randrange(5)))}
    return {"row": rng.choice(sorted(current["now"]))}


def walk(value, key):
    """Every value stored under ``key`` anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from walk(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v, key)


def stored(service, secret):
    return db.load_record(service.engine, db.game_row(service.engine, secret))


LEAF = "leaf"  # a number, a string, true/false/null, or a list of those
ROW_POINTS = "row points"  # an object of row names to points
RULES_VIEW = {
    "name": LEAF,
    "title": LEAF,
    "rows": [{"name": LEAF, "title": LEAF, "upper": LEAF}],
    **dict.fromkeys(("rolls_per_turn", "bonus_threshold", "bonus_points", "yahtzee_bonus"), LEAF),
}
SHEET_VIEW = dict.fromkeys(("seat", "cells", "total", "upper_subtotal", "upper_bonus", "yahtzee_bonus"), LEAF)
COACH_VIEW = {
    **dict.fromkeys(("dice", "chosen", "chosen_expected", "chosen_win", "best", "best_expected", "loss"), LEAF),
    **dict.fromkeys(("turn", "roll", "decision"), LEAF),  # the decision graded
    **dict.fromkeys(("win_exact", "win_best", "win_best_chance", "win_loss", "win_note"), LEAF),  # at a table of two
    **dict.fromkeys(("win_learned", "learned_win_label", "chosen_learned_win"), LEAF),  # a shipped planner's chances
    "options": [dict.fromkeys(("label", "expected", "win", "chosen", "learned_win"), LEAF)],
}
EVENT_KEYS = ("seat", "player", "kind", "turn", "roll", "dice", "rolls_left", "action", "label", "points", "row_points")
VIEW = {
    "game": {
        **dict.fromkeys(("mode", "coach", "started"), LEAF),
        "players": [dict.fromkeys(("seat", "name", "kind", "policy"), LEAF)],
    },
    "rules": RULES_VIEW,
    "rows": [{"name": LEAF, "title": LEAF}],
    **dict.fromkeys(("seq", "since", "finished", "winners", "replayed", "agent_seconds"), LEAF),
    "current": {**dict.fromkeys(("seat", "name", "kind", "turn", "roll", "rolls_left", "dice"), LEAF), "now": ROW_POINTS},
    "sheets": [SHEET_VIEW],
    "events": [dict.fromkeys((*EVENT_KEYS, "total", "row", "rerolled"), LEAF)],
    "coach": COACH_VIEW,
    "replaced": [dict.fromkeys(("seat", "name", "policy", "by", "reason"), LEAF)],
}
SUMMARY = {
    **dict.fromkeys(("mode", "winners", "optimum", "win_note"), LEAF),
    "rules": RULES_VIEW,
    "rows": [{"name": LEAF, "title": LEAF}],
    "seats": [
        {
            **SHEET_VIEW,
            **dict.fromkeys(("name", "kind", "decisions", "reroll_decisions", "row_decisions", "loss_total"), LEAF),
            **dict.fromkeys(("loss_per_decision", "loss_per_reroll", "loss_per_row", "loss_by_turn"), LEAF),
            "worst": [dict.fromkeys(("turn", "roll", "dice", "chosen", "best", "loss"), LEAF)],
            **dict.fromkeys(("win_decisions", "win_loss_per_decision", "win_loss_per_game"), LEAF),  # at a table of two
            "win_worst": [
                dict.fromkeys(("game_id", "turn", "roll", "dice", "chosen", "best", "chance_chosen", "chance_best", "loss"), LEAF)
            ],
        }
    ],
    "turns": [{"turn": LEAF, "seats": [dict.fromkeys(("row", "points", "total", "loss"), LEAF)]}],
}
SCALARS = (int, float, str, bool, type(None))


def check_fits(value, schema, where: str = "body") -> None:
    """``value`` holds nothing but what ``schema`` allows: known keys only, at every depth."""
    if schema == LEAF:
        items = value if isinstance(value, list) else [value]
        assert all(isinstance(item, SCALARS) for item in items), f"{where}: {value!r} is not a plain value"
    elif schema == ROW_POINTS:
        assert isinstance(value, dict) and all(isinstance(p, int) for p in value.values()), f"{where}: {value!r}"
    elif value is None:
        return
    elif isinstance(schema, list):
        assert isinstance(value, list), f"{where}: expected a list, got {value!r}"
        for index, item in enumerate(value):
            check_fits(item, schema[0], f"{where}[{index}]")
    else:
        assert isinstance(value, dict), f"{where}: expected an object, got {value!r}"
        assert set(value) <= set(schema), f"{where}: keys {sorted(set(value) - set(schema))} are not in the view"
        for key, item in value.items():
            check_fits(item, schema[key], f"{where}.{key}")


def integer_lists(value):
    """Every list of integers anywhere in a JSON document."""
    if isinstance(value, dict):
        for v in value.values():
            yield from integer_lists(v)
    elif isinstance(value, list):
        if value and all(type(v) is int for v in value):
            yield value
        for v in value:
            yield from integer_lists(v)


def rolls_to_come(match) -> list[list[int]]:
    """Every roll of every seat not rolled yet, in the order it lands and sorted."""
    coming = []
    for seat in match.seats:
        turn, first = (seat.rows_filled, seat.roll) if not seat.finished else (seat.rules.num_turns, 0)
        for t in range(turn, seat.rules.num_turns):
            for roll in seat.faces[t, first if t == turn else 0 :].tolist():
                coming += [roll, sorted(roll)]
    return coming


def check_nothing_unrolled(service, secret, body: dict) -> None:
    """The response shows only what the page may see, and of the dice only those of positions reached:
    recorded decisions, and the person's dice now; no list in it is a roll still to come."""
    check_fits(body, SUMMARY if "seats" in body else VIEW)
    record = stored(service, secret)
    reached = [d["dice"] for d in record.decisions]
    match = service.live(secret).match
    if match.current is not None and match.current.kind == "human":
        reached.append(list(match.current.dice))
    for dice in walk(body, "dice"):
        assert dice in reached, f"dice {dice} shown but not rolled yet"
    coming = rolls_to_come(match)
    for values in integer_lists(body):
        assert values in reached or values not in coming, f"{values} is a roll still to come"
    assert len(record.decisions) == body.get("seq", len(record.decisions))  # committed before acknowledged


def play_out(client, service, secret, rng, check=True) -> dict:
    view = client.get(f"/api/games/{secret}").json()
    while not view["finished"]:
        response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **random_choice(view, rng)})
        assert response.status_code == 200, response.text
        view = response.json()
        if check:
            check_nothing_unrolled(service, secret, view)
    return view


def test_a_whole_game_never_shows_dice_not_rolled_yet(client, service):
    rng = random.Random(1)
    secret = new_game(client, "table", ["optimal", "random"], coach=True)
    view = client.get(f"/api/games/{secret}").json()
    check_nothing_unrolled(service, secret, view)
    responses = 0
    while not view["finished"]:
        response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **random_choice(view, rng)})
        assert response.status_code == 200, response.text
        view = response.json()
        check_nothing_unrolled(service, secret, view)
        coach = view["coach"]
        assert coach is not None and coach["options"][0]["expected"] >= coach["chosen_expected"] - 1e-9
        # the expected final scores: the best's is the top option's, and the chosen one's is that less the loss
        assert coach["options"][0]["expected"] == pytest.approx(coach["best_expected"])
        assert coach["best_expected"] - coach["loss"] == pytest.approx(coach["chosen_expected"])
        labels = [option["label"] for option in coach["options"]]
        marked = [option["label"] for option in coach["options"] if option["chosen"]]
        assert marked == ([coach["chosen"]] if coach["chosen"] in labels else [])  # the one chosen, if shown
        assert all(0 <= option["win"] <= 1 for option in coach["options"]) and 0 <= coach["chosen_win"] <= 1
        if responses == 0:  # the first decision: the chances are agents.policies.win's for that position
            from agents.solvers.win_chances import win_probabilities

            first = stored(service, secret).decisions[0]
            chances = win_probabilities(first["dice"], first["rolls_left"], first["open"], 0, [(0, list(first["open"]))] * 2)
            assert coach["chosen_win"] == pytest.approx(float(chances[first["action"]]))
        responses += 1
        summary = client.get(f"/api/games/{secret}/summary")
        if not view["finished"]:
            assert summary.status_code == 409
    assert responses >= 12
    summary = client.get(f"/api/games/{secret}/summary").json()
    check_nothing_unrolled(service, secret, summary)
    assert [s["total"] for s in summary["seats"]] == [s["total"] for s in view["sheets"]]
    assert set(summary["winners"]) == set(view["winners"])
    assert all(len(s["loss_by_turn"]) == 12 for s in summary["seats"])
    optimal = summary["seats"][1]
    assert optimal["loss_per_decision"] == pytest.approx(0.0, abs=1e-9)  # the optimum loses nothing
    # the stored game replays with the project's own rules to the same totals
    replayed = Match.resume(stored(service, secret))
    assert replayed.finished and replayed.totals == [s["total"] for s in summary["seats"]]


def test_the_game_over_page_lists_each_player_s_five_worst_decisions_worst_first(client, service):
    secret = new_game(client, name="five")
    play_out(client, service, secret, random.Random(5), check=False)  # at random: many decisions lose points
    (seat,) = client.get(f"/api/games/{secret}/summary").json()["seats"]
    record = stored(service, secret)
    losses = sorted(service.grader_for(YACHT).grade(record.decisions).loss, reverse=True)
    assert losses[5] > 0  # more than five decisions lost points
    assert [worst["loss"] for worst in seat["worst"]] == pytest.approx(losses[:5])


def test_at_a_yacht_table_of_three_the_coach_card_gives_the_shipped_planners_learned_chances_beside(
    client, service, tmp_path, monkeypatch
):
    import agents.learned.planN_files
    import yacht_play.serve.games as games
    from tests.agents.test_planN import ship_planN

    coached = []
    coach = games.coach_decision
    monkeypatch.setattr(games, "coach_decision", lambda *args, **kwargs: coached.append(coach(*args, **kwargs)) or coached[-1])
    rng = random.Random(4)
    for shipped in (True, False):
        folder = tmp_path / str(shipped)
        folder.mkdir()
        if shipped:
            ship_planN(monkeypatch, folder, YACHT, seed=3)
        else:
            monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", folder)  # an empty folder: none shipped
        secret = new_game(client, "table", ["optimal", "greedy"], coach=True, name=f"learned {shipped}")
        view = client.get(f"/api/games/{secret}").json()
        for _ in range(5):
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **random_choice(view, rng)}).json()
            card, coaching = view["coach"], coached[-1]
            check_fits(view, VIEW)
            assert card["chosen_win"] == coaching.chosen_chance and "win_learned" not in card  # the chances as before
            if not shipped:
                assert not {"learned_win_label", "chosen_learned_win"} & set(card)
                assert all("learned_win" not in option for option in card["options"])
                continue
            assert card["learned_win_label"] == "learned win" and card["chosen_learned_win"] == coaching.chosen_learned_chance
            assert [o["learned_win"] for o in card["options"]] == [
                o.learned_chance for o in coaching.options[: games.COACH_OPTIONS]
            ]
            assert all(0 <= o["learned_win"] <= 1 for o in card["options"])


def test_the_coach_names_the_turn_the_roll_and_the_decision_it_grades(client, service):
    """The card stays up while the game moves on: without its turn and roll, a grade reads as one of the dice now."""
    secret = new_game(client, "solitaire", coach=True, name="turns")
    view = client.get(f"/api/games/{secret}").json()
    first = view["current"]["dice"]
    view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "hold": [0, 1]}).json()
    assert (view["coach"]["turn"], view["coach"]["roll"]) == (1, 1)
    assert view["coach"]["decision"] == f"Turn 1, after roll 1: keep {first[0]} {first[1]}"
    for turn, row, title, face in ((1, "sixes", "Sixes", 6), (2, "twos", "Twos", 2)):
        dice = view["current"]["dice"]
        view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": row}).json()
        roll = 2 if turn == 1 else 1
        assert view["coach"]["decision"] == f"Turn {turn}, after roll {roll}: scored {face * dice.count(face)} in {title}"
        assert view["current"]["turn"] == turn + 1  # the page has moved on to the next turn; the card has not


def test_a_refused_request_gets_a_4xx_with_one_line_and_changes_nothing(client, service):
    secret = new_game(client, "table", ["greedy"])
    view = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0, 1]}).json()
    before = stored(service, secret).decisions
    filled = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": "ones"}).json()
    before = stored(service, secret).decisions
    url = f"/api/games/{secret}/actions"
    seq = filled["seq"]
    bad = [
        (dict(json={"seq": seq, "row": "ones"}), 400, "already filled"),
        (dict(json={"seq": seq, "row": "sevens"}), 400, "rows are"),
        (dict(json={"seq": seq, "hold": [0, 1, 2, 3, 4]}), 400, "every die is held"),
        (dict(json={"seq": seq, "hold": [5]}), 400, "positions 0..4"),
        (dict(json={"seq": seq, "hold": [1, 1]}), 400, "distinct"),
        (dict(json={"seq": seq, "action": 0}), 400, "never allowed"),
        (dict(json={"seq": seq, "action": 44}), 400, "0..43"),
        (dict(json={"seq": seq, "hold": [], "row": "ones"}), 400, "one of"),
        (dict(json={"seq": seq + 1, "row": "twos"}), 409, "reload"),
        (dict(json={"seq": "x", "row": "twos"}), 400, "seq"),
        (dict(json=[1, 2]), 400, "JSON object"),
        (dict(content=b"{not json", headers={"content-type": "application/json"}), 400, "not valid JSON"),
        (dict(content=b"seq=1", headers={"content-type": "application/x-www-form-urlencoded"}), 415, "JSON"),
        (
            dict(content=b'{"seq": 1, "pad": "' + b"x" * MAX_BODY + b'"}', headers={"content-type": "application/json"}),
            413,
            "bytes",
        ),
    ]
    for kwargs, status, words in bad:
        response = client.post(url, **kwargs)
        assert response.status_code == status, (kwargs, response.text)
        error = response.json()["error"]
        assert words in error and "\n" not in error and "Traceback" not in error
    assert stored(service, secret).decisions == before
    assert client.get(f"/api/games/{secret}?since={seq}").json()["seq"] == seq
    # a wrong or guessed secret is refused; a game's view names only its own players
    for guess in ["nope", "A" * 32, secret[:-1] + ("a" if secret[-1] != "a" else "b")]:
        response = client.post(f"/api/games/{guess}/actions", json={"seq": 0, "row": "ones"})
        assert response.status_code == 404 and "no such game" in response.json()["error"]
    other = new_game(client, name="bob")
    assert [p["name"] for p in client.get(f"/api/games/{other}").json()["game"]["players"]] == ["bob"]
    # a finished game refuses more decisions
    play_out(client, service, other, random.Random(2), check=False)
    done = client.get(f"/api/games/{other}").json()
    response = client.post(f"/api/games/{other}/actions", json={"seq": done["seq"], "row": "ones"})
    assert response.status_code == 409 and "over" in response.json()["error"]


def test_a_request_sent_twice_is_applied_once(client, service):
    secret = new_game(client)
    first = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [2]})
    again = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [2]})
    assert first.status_code == again.status_code == 200
    assert again.json()["replayed"] and again.json()["seq"] == 1
    assert len(stored(service, secret).decisions) == 1
    other = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [3]})  # not the same decision
    assert other.status_code == 409


def test_every_answer_says_how_long_the_server_took(client):
    secret = new_game(client)
    for request in (
        lambda: client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [1]}),
        lambda: client.get(f"/api/games/{secret}"),
        lambda: client.get("/api/games/no-such-game"),
        lambda: client.get("/"),
    ):
        started = time.perf_counter()
        response = request()
        waited = 1000 * (time.perf_counter() - started)  # milliseconds, the server's time and the client's
        kind, duration = response.headers["server-timing"].split(";dur=")
        assert kind == "app" and 0 <= float(duration) <= waited, (response.headers["server-timing"], waited)


@pytest.mark.parametrize(
    "body, error",
    [
        ({"name": "", "mode": "solitaire"}, "name: type a player name (1 to 40 characters)"),
        ({"name": "x" * 41, "mode": "solitaire"}, "name: 41 characters is too long; at most 40"),
        ({"name": "ann", "mode": "tournament"}, "mode 'tournament' is not offered; choose one of solitaire, table, duplicate"),
        ({"name": "ann", "mode": "table", "agents": "optimal"}, "agents: a list of agent names is expected"),
        ({"name": "ann", "mode": "table", "agents": [1]}, "agents: a list of agent names is expected"),
        ({"name": "ann", "mode": "solitaire", "agents": ["optimal"]}, "mode solitaire plays with no agents, got 1"),
        ({"name": "ann", "mode": "table", "agents": []}, "mode table plays with 1 to 4 agents, got 0"),
        ({"name": "ann", "mode": "table", "agents": ["optimal"] * 5}, "mode table plays with 1 to 4 agents, got 5"),
        ({"name": "ann", "mode": "duplicate", "agents": ["optimal", "greedy"]}, "mode duplicate plays with 1 agent, got 2"),
        (
            {"name": "ann", "mode": "table", "agents": ["ppo:elsewhere.zip"]},
            "agent 'ppo:elsewhere.zip' is not offered here; choose from OFFERED",
        ),
        ({"name": "ann", "mode": "solitaire", "coach": "yes"}, "coach: true or false"),
    ],
)
def test_new_games_are_validated(client, service, body, error):
    before = len(db.all_games(service.engine))
    response = client.post("/api/games", json=body)
    offered = ", ".join(service.lobby_names.values())
    assert response.status_code == 400 and response.json()["error"] == error.replace("OFFERED", offered)
    assert len(db.all_games(service.engine)) == before  # nothing stored


def test_names_are_stored_as_given(client, service):
    name = "<img src=x onerror=alert(1)>';--é"
    secret = new_game(client, name=name)
    assert client.get(f"/api/games/{secret}").json()["game"]["players"][0]["name"] == name
    assert client.get(f"/api/players/{name}").json()["games"][0]["mode"] == "solitaire"


def test_duplicate_the_agent_plays_the_same_dice_after_the_person(client, service):
    secret = new_game(client, "duplicate", ["optimal"], coach=True, name="dup")
    view = play_out(client, service, secret, random.Random(3))
    assert view["coach"]["chosen_win"] is None  # seats on the same dice: no chance of winning is shown
    record = stored(service, secret)
    person = [d for d in record.decisions if d["seat"] == 0]
    agent = [d for d in record.decisions if d["seat"] == 1]
    assert record.decisions == person + agent  # the agent moved only once the person was done
    firsts = lambda ds: [d["dice"] for d in ds if d["roll"] == 1]  # noqa: E731
    assert firsts(person) == firsts(agent)  # each turn starts on the same dice
    summary = client.get(f"/api/games/{secret}/summary").json()
    assert [t["seats"][1]["total"] for t in summary["turns"]][-1] == view["sheets"][1]["total"]
    history = client.get("/api/players/dup").json()["games"]
    assert history[0]["finished"] and history[0]["score"] == view["sheets"][0]["total"]
    assert history[0]["loss_per_decision"] == pytest.approx(summary["seats"][0]["loss_per_decision"])
    assert history[0]["link"] == f"/game/{secret}"
    assert len(record.end["winners"]) == 1  # random play against the optimum on the same dice: one of them won
    assert history[0]["won"] is ("dup" in record.end["winners"])  # the person's result, not the agent's


def test_a_stored_game_whose_rows_no_longer_replay_is_a_server_error_naming_the_game(client, service):
    """Rows changed behind the server's back (a decision's points): the rebuilt game is refused with 500 in one line."""
    import json

    secret = new_game(client, name="tampered")
    view = client.get(f"/api/games/{secret}").json()
    client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": sorted(view["current"]["now"])[0]})
    game_id = stored(service, secret).game_id
    with service.engine.begin() as connection:
        row = connection.execute(db.decisions.select().where(db.decisions.c.game_id == game_id)).first()
        record = json.loads(row.record)
        record["points"] += 1
        connection.execute(
            db.decisions.update()
            .where((db.decisions.c.game_id == game_id) & (db.decisions.c.number == row.number))
            .values(record=json.dumps(record))
        )
    service.forget(service.live(secret))
    response = client.get(f"/api/games/{secret}")
    assert response.status_code == 500
    error = response.json()["error"]
    assert error.startswith(f"game {game_id} cannot be replayed: ") and "points" in error and "\n" not in error


def test_the_games_kept_in_memory_are_the_most_recently_used(tmp_path, monkeypatch):
    """Past the limit the least recently used game leaves memory (its next request rebuilds it from its rows)."""
    from yacht_play.serve import games

    monkeypatch.setattr(games, "CACHE_GAMES", 2)
    service = GameService(db.connect(str(tmp_path / "lru.db")), [])
    first, second = (service.create(name, "solitaire", [], False) for name in ("ann", "bo"))
    service.live(first)  # used again: now the second is the least recently used
    third = service.create("cy", "solitaire", [], False)
    assert list(service._live) == [first, third]
    assert service.live(second).match.game_id == stored(service, second).game_id  # rebuilt from its rows


def test_agents_think_off_the_event_loop(client, service):
    seen = []
    policy = service.policies[("random", "yacht")]  # by (name, rules); each game's guard asks it for a batch
    original = policy.act_batch

    def act_batch(observations, masks):
        try:
            asyncio.get_running_loop()
            seen.append("event loop")
        except RuntimeError:
            seen.append("worker thread")
        return original(observations, masks)

    policy.act_batch = act_batch
    try:
        secret = new_game(client, "table", ["random"])
        client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": "yacht"})
    finally:
        del policy.act_batch
    assert seen and set(seen) == {"worker thread"}


def test_the_server_answers_others_while_an_agent_thinks(client, service):
    import threading

    policy = service.policies[("random", "yacht")]
    original = policy.act_batch
    thinking, release = threading.Event(), threading.Event()

    def act_batch(observations, masks):  # an agent that thinks until the test lets it go
        thinking.set()
        assert release.wait(30), "the agent was never released"
        return original(observations, masks)

    answers = {}
    secret = new_game(client, "table", ["random"], name="waits")
    other = new_game(client, name="meanwhile")
    policy.act_batch = act_batch
    try:
        moving = threading.Thread(
            target=lambda: answers.setdefault(
                "move", client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": "yacht"})
            )
        )
        moving.start()
        assert thinking.wait(30)
        # the agent is still thinking: other people's requests are answered meanwhile
        assert client.get("/api/agents").status_code == 200
        played = client.post(f"/api/games/{other}/actions", json={"seq": 0, "row": "choice"})
        assert played.status_code == 200 and played.json()["seq"] == 1
        assert moving.is_alive() and "move" not in answers
        release.set()
        moving.join(30)
    finally:
        release.set()
        del policy.act_batch
    assert answers["move"].status_code == 200 and answers["move"].json()["seq"] > 1  # the agent's moves came back


def test_export_writes_records_that_analyze_reads_and_import_loads(client, service, tmp_path, capsys):
    import argparse

    from yacht_play.analyze import main as analyze
    from yacht_play.serve.cli import configure_export, configure_import, run_export, run_import

    secret = new_game(client, "table", ["greedy"], name="exporter")
    play_out(client, service, secret, random.Random(4), check=False)
    url = str(service.engine.url.database)

    def command(configure, run, argv):
        parser = argparse.ArgumentParser()
        configure(parser)
        return run(parser.parse_args(argv))

    exported = tmp_path / "games.jsonl"
    assert command(configure_export, run_export, ["--db", url, "-o", str(exported), "--finished"]) == 0
    games = {g.game_id: g for g in read_records(exported).games}
    game = games[stored(service, secret).game_id]
    assert game.finished and len(game.decisions) == len(stored(service, secret).decisions)
    assert all(g.finished for g in games.values())
    assert analyze([str(exported)]) == 0
    assert "exporter" in capsys.readouterr().out

    # a terminal game into a fresh database, once
    terminal = tmp_path / "terminal.jsonl"
    match = Match.new([__import__("yacht_play.match", fromlist=["Player"]).Player("term")], seed=7)
    rng = random.Random(5)
    while not match.finished:
        legal = [a for a, ok in enumerate(match.current.legal_mask()) if ok]
        match.play(rng.choice(legal))
    write_games(terminal, [match.game_record()])
    fresh = str(tmp_path / "fresh.db")
    assert command(configure_import, run_import, [str(terminal), "--db", fresh]) == 0
    assert command(configure_import, run_import, [str(terminal), "--db", fresh]) == 0
    assert "0 games added, 1 already" in capsys.readouterr().err
    back = db.all_games(db.connect(fresh))
    assert len(back) == 1 and back[0].decisions == match.decisions and back[0].end == match.end


def test_an_imported_game_against_an_agent_is_the_person_s_with_their_score(tmp_path):
    """The stored game belongs to the person who played it, whichever seat the agent had, and holds their result."""
    from yacht_play.match import Player

    for players in ([Player("cleo"), Player("bot", "agent", "greedy")], [Player("bot", "agent", "greedy"), Player("cleo")]):
        match = Match.new(players, seed=11, mode="table")
        rng = random.Random(3)
        while not match.finished:
            if match.current.player.kind == "agent":
                match.play_agent()
            else:
                match.play(rng.choice([a for a, ok in enumerate(match.current.legal_mask()) if ok]))
        engine = db.connect(str(tmp_path / f"import-{players[0].name}.db"))
        assert GameService(engine, []).import_game(match.game_record())
        row = db.game_row_by_id(engine, match.game_id)
        person = next(seat for seat in match.seats if seat.player.kind == "human")
        assert (row.player, row.score) == ("cleo", person.total)


def test_the_schema_is_versioned_and_a_newer_one_refused(tmp_path):
    path = tmp_path / "v.db"
    engine = db.connect(str(path))
    assert db.migrate(engine) == len(db.MIGRATIONS)  # migrating again changes nothing
    engine.dispose()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        connection.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(db.DatabaseError, match="schema version 99"):
        db.connect(str(path))


def test_serve_refuses_bad_options_in_one_line(tmp_path, capsys):
    from yacht_play.cli import main

    assert main(["serve", "--db", str(tmp_path / "x.db"), "--agents", "optimal,clever"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "unknown policy 'clever'" in error
    assert main(["serve", "--db", "postgresql://nobody@127.0.0.1:1/none"]) == 2
    assert "cannot open database" in capsys.readouterr().err


def test_agents_of_the_server_play_on_after_a_game_leaves_memory_and_win_sits_at_tables(tmp_path):
    """A game is rebuilt from its rows with the server's own agents (a model agent too), and win plays at tables only."""
    engine = db.connect(str(tmp_path / "agents.db"))
    service = GameService(engine, ["win", f"ppo:{ROOT / 'models' / 'ppo.safetensors'}", "target:150"])
    model = service.agents[1]
    with TestClient(create_app(service)) as client:
        secret = new_game(client, "table", [model, "win"], coach=True)
        rng = random.Random(7)
        view = client.get(f"/api/games/{secret}").json()
        for _ in range(4):  # the person's decisions, each answered by both agents' turns
            view = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], **random_choice(view, rng)}).json()
        before = stored(service, secret)
        service.forget(service.live(secret))  # as after a restart: the next request rebuilds the game from its rows
        view = play_out(client, service, secret, rng)
        assert view["finished"] and stored(service, secret).decisions[: len(before.decisions)] == before.decisions
        assert play_out(client, service, new_game(client, "table", ["target:150", "target:150"]), rng)["finished"]
        assert play_out(client, service, new_game(client, "duplicate", ["target:150"]), rng)["finished"]
        refused = client.post("/api/games", json={"name": "ann", "mode": "duplicate", "agents": ["win"], "coach": False})
        assert refused.status_code == 400 and "plays at a table" in refused.json()["error"]


@pytest.mark.parametrize(
    "mode, agents, wanted",
    [("solitaire", 1, "no agents"), ("table", 0, "1 to 4 agents"), ("table", 5, "1 to 4 agents"), ("duplicate", 2, "1 agent")],
)
def test_each_mode_seats_its_number_of_agents_and_a_table_at_most_five_players(client, mode, agents, wanted):
    response = client.post("/api/games", json={"name": "ann", "mode": mode, "agents": ["random"] * agents, "coach": False})
    assert response.status_code == 400 and f"mode {mode} plays with {wanted}, got {agents}" in response.text
    assert client.post("/api/games", json={"name": "ann", "mode": "table", "agents": ["random"] * 4}).status_code == 201


def test_an_agent_that_cannot_choose_is_replaced_by_optimal_and_the_game_goes_on(client, service):
    from agents.policies.policy import PolicyOutputError

    class Overflowing:  # a model whose outputs are not finite at this position; otherwise the agent it was
        def __init__(self, policy):
            self.policy = policy

        def act_batch(self, observations, masks):
            raise PolicyOutputError("the network gave NaN outputs at this position")

        def __getattr__(self, name):
            return getattr(self.policy, name)

    secret = new_game(client, "table", ["greedy"], name="replaced")
    seat = service.live(secret).match.seats[1]
    seat.policy.policy = Overflowing(seat.policy.policy)  # behind the game's own guard
    response = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "row": "choice"})
    assert response.status_code == 200, response.text
    view = response.json()
    (note,) = view["replaced"]
    assert {key: note[key] for key in ("seat", "name", "policy", "by")} == {
        "seat": 1,
        "name": seat.name,
        "policy": "greedy",
        "by": "optimal",
    }
    assert note["reason"].startswith("dice ") and note["reason"].endswith(": the network gave NaN outputs at this position")
    assert view["current"]["kind"] == "human" and view["seq"] >= 2
    assert [d["seat"] for d in stored(service, secret).decisions][1:] == [1] * (view["seq"] - 1)  # its turn was played
    other = new_game(client, "table", ["greedy"], name="unreplaced")  # the same shared agent, in another game: its own
    assert service.live(other).match.seats[1].policy.replaced is None
    # the replacement that cannot choose either is an error, not an endless round of replacements
    seat.policy.fallback = Overflowing(seat.policy.fallback)
    with pytest.raises(PolicyOutputError, match="the network gave NaN"):
        client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": "yacht"})


def test_a_decision_the_database_cannot_save_gets_503_and_the_game_goes_on_from_its_rows(client, service, monkeypatch):
    from sqlalchemy.exc import OperationalError

    secret = new_game(client, name="unsaved")

    def disk_full(*args, **kwargs):
        raise OperationalError("INSERT INTO decisions", {}, OSError("database or disk is full"))

    monkeypatch.setattr(db, "append_decisions", disk_full)
    response = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0]})
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error == "the decision could not be saved; reload and try again"
    monkeypatch.undo()
    assert stored(service, secret).decisions == []
    assert client.get(f"/api/games/{secret}").json()["seq"] == 0  # memory is not ahead of the rows
    retried = client.post(f"/api/games/{secret}/actions", json={"seq": 0, "hold": [0]})
    assert retried.status_code == 200 and retried.json()["seq"] == 1
    assert len(stored(service, secret).decisions) == 1


@pytest.mark.parametrize("mode, agents", [("solitaire", []), ("table", ["greedy"])])
def test_only_a_duplicate_game_summary_lines_up_the_turns(client, service, mode, agents):
    secret = new_game(client, mode, agents, name="no-turns")
    play_out(client, service, secret, random.Random(6), check=False)
    summary = client.get(f"/api/games/{secret}/summary").json()
    assert summary["mode"] == mode and summary["turns"] is None
