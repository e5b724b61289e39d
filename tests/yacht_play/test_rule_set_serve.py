"""``yacht serve`` under every rule set: games ask for their rules, play bonuses and jokers, and are graded on them.

Games are played to the end through the HTTP API by a simulated person who plays the optimum
(``Chooser`` at temperature 0), on dice dealt from a chosen seed (the server's seed generator is
patched): Yahtzee game 3 earns the upper bonus and two extra Yahtzees, one of them a joker in the
large straight. Every total is checked against ``RuleSet.score_on`` over the stored decisions,
and every coach value against ``agents.solvers.optimal.q_values`` given the sheet state.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the serve API tests need httpx (Starlette's TestClient)")

from agents.solvers.optimal import q_values  # noqa: E402
from tests.yacht_play.test_serve_api import TestClient  # noqa: E402
from yacht_env.rules import RULE_SETS, rule_set  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.coach import Grader  # noqa: E402
from yacht_play.match import Match  # noqa: E402
from yacht_play.serve import games  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402
from yacht_play.simulate import Chooser  # noqa: E402


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    engine = db.connect(str(tmp_path_factory.mktemp("rule-sets") / "yacht.db"))
    return GameService(engine, ["random", "greedy", "optimal", "win"])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        yield client


def create(client, monkeypatch, rules, seed, mode="solitaire", agents=(), coach=True, name="ann") -> str:
    monkeypatch.setattr(games.secrets, "randbits", lambda bits: seed)  # the dice of Yacht-v0 reset with ``seed``
    response = client.post(
        "/api/games", json={"name": name, "mode": mode, "agents": list(agents), "coach": coach, "rules": rules}
    )
    assert response.status_code == 201, response.text
    return response.json()["secret"]


def play_optimally(client, secret) -> tuple[dict, list[dict]]:
    """Play the person's seat with the optimum through the API; the final view and each answer's coach."""
    chooser = Chooser(0.0, np.random.default_rng(0))
    view = client.get(f"/api/games/{secret}").json()
    coached = []
    while not view["finished"]:
        action, _ = chooser.choose(view["current"], view)
        before = view
        response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "action": action})
        assert response.status_code == 200, response.text
        view = response.json()
        coached.append((before, view["coach"]))
    return view, coached


def stored(service, secret):
    return db.load_record(service.engine, db.game_row(service.engine, secret))


def replayed_totals(rules, decisions, seats) -> list[tuple]:
    """Per seat: total, upper subtotal, upper bonus, extra-Yahtzee bonuses, by ``RuleSet.score_on``."""
    out = []
    for seat in range(seats):
        sheet, total, upper_bonus, yahtzee_bonus = rules.new_sheet(), 0, 0, 0
        for d in decisions:
            if d["seat"] == seat and d["points"] is not None:
                result = rules.score_on(sheet, d["dice"], d["action"] - rules.dice.num_rerolls)
                sheet, total = result.sheet, total + result.reward
                upper_bonus += result.upper_bonus
                yahtzee_bonus += result.yahtzee_bonus
        out.append((total, sheet.upper_total, upper_bonus, yahtzee_bonus))
    return out


def test_a_yahtzee_game_over_http_plays_every_bonus_and_grades_every_decision(client, service, monkeypatch):
    rules = rule_set("yahtzee")
    secret = create(client, monkeypatch, "yahtzee", 3)
    view, coached = play_optimally(client, secret)
    assert view["rules"]["name"] == "yahtzee" and len(view["rows"]) == 13
    record = stored(service, secret)
    assert record.header["rules"] == "yahtzee"
    total, upper, upper_bonus, yahtzee_bonus = replayed_totals(rules, record.decisions, 1)[0]
    sheet = view["sheets"][0]
    assert (sheet["total"], sheet["upper_subtotal"], sheet["upper_bonus"], sheet["yahtzee_bonus"]) == (
        total,
        upper,
        upper_bonus,
        yahtzee_bonus,
    )
    assert (total, upper_bonus, yahtzee_bonus) == (513, 35, 200)  # the totals hold the bonuses
    assert total == sum(sheet["cells"]) + upper_bonus + yahtzee_bonus
    joker = next(d for d in record.decisions if d["turn"] == 9 and d["points"] is not None)
    assert joker["dice"] == [5] * 5 and joker["points"] == 140  # a joker's large straight (40) and its 100
    events = client.get(f"/api/games/{secret}?since=0").json()["events"]
    assert next(e for e in events if e["turn"] == 9 and e["row"])["row_points"] == 40
    # the coach values each option with the sheet state, as agents.solvers.optimal.q_values does
    for before, coach in coached:
        current, cells = before["current"], before["sheets"][0]["cells"]
        open_rows = [row["name"] for row, points in zip(before["rows"], cells) if points is None]
        yahtzee_box = cells[rules.yahtzee_row_index]
        q = q_values(
            current["dice"],
            current["rolls_left"],
            open_rows,
            "yahtzee",
            upper_total=before["sheets"][0]["upper_subtotal"],
            yahtzee_box=yahtzee_box,
        )
        assert coach["best_expected"] == pytest.approx(before["sheets"][0]["total"] + q.max())
        assert coach["loss"] == pytest.approx(0.0, abs=1e-9)
    # every decision in the database graded on the sheet state: the optimum loses nothing
    row = db.game_row(service.engine, secret)
    assert row.score == 513 and row.loss == pytest.approx(0.0, abs=1e-12)
    losses = Grader(rules).grade(record.decisions).loss
    assert len(losses) == len(record.decisions) and np.all(losses == 0)
    summary = client.get(f"/api/games/{secret}/summary").json()
    seat = summary["seats"][0]
    assert summary["rules"]["name"] == "yahtzee" and summary["optimum"] == pytest.approx(254.5896094820)
    assert seat["decisions"] == len(record.decisions) and seat["loss_per_decision"] == pytest.approx(0.0, abs=1e-12)
    assert (seat["total"], seat["upper_bonus"], seat["yahtzee_bonus"]) == (513, 35, 200)
    assert Match.resume(record).totals == [513]


def test_a_yahtzee_table_game_against_agents_totals_every_seat(client, service, monkeypatch):
    rules = rule_set("yahtzee")
    secret = create(client, monkeypatch, "yahtzee", 19, mode="table", agents=["greedy", "random"])
    view, _ = play_optimally(client, secret)
    record = stored(service, secret)
    expected = replayed_totals(rules, record.decisions, 3)
    assert [s["total"] for s in view["sheets"]] == [t[0] for t in expected] == record.end["totals"]
    assert [(s["upper_bonus"], s["yahtzee_bonus"]) for s in view["sheets"]] == [t[2:] for t in expected]
    summary = client.get(f"/api/games/{secret}/summary").json()
    for seat in summary["seats"]:
        mine = [d for d in record.decisions if d["seat"] == seat["seat"]]
        assert seat["decisions"] == len(mine) and seat["loss_per_decision"] is not None
    assert summary["seats"][0]["loss_per_decision"] == pytest.approx(0.0, abs=1e-12)
    assert summary["seats"][2]["loss_per_decision"] > 1  # random plays badly, and is graded so


@pytest.mark.slow  # solving Yatzy takes about 12 s of CPU the first time
def test_a_yatzy_game_over_http_earns_its_50_point_bonus(client, service, monkeypatch):
    rules = rule_set("yatzy")
    secret = create(client, monkeypatch, "yatzy", 0)
    view, _ = play_optimally(client, secret)
    record = stored(service, secret)
    total, upper, upper_bonus, _ = replayed_totals(rules, record.decisions, 1)[0]
    assert (view["sheets"][0]["total"], upper_bonus) == (total, 50) and total == 300 and len(view["rows"]) == 15
    assert db.game_row(service.engine, secret).loss == pytest.approx(0.0, abs=1e-12)


def test_rules_are_validated_and_agents_must_play_them(client, service):
    before = len(db.all_games(service.engine))
    for rules, words in [
        ("yahtzeee", "rules 'yahtzeee' is not a rule set; choose one of yacht, yacht_exercism, yahtzee"),
        (5, "rules 5 is not a rule set"),
        (["yatzy"], "is not a rule set"),
    ]:
        response = client.post("/api/games", json={"name": "ann", "mode": "solitaire", "rules": rules})
        assert response.status_code == 400 and words in response.json()["error"], response.text
    response = client.post("/api/games", json={"name": "ann", "mode": "table", "agents": ["win"], "rules": "yahtzee"})
    assert response.status_code == 400
    assert "agent 'win' plays rule sets without bonuses or jokers" in response.json()["error"]
    assert len(db.all_games(service.engine)) == before
    offered = client.get("/api/agents").json()
    assert offered["rules"] == list(RULE_SETS) and offered["default_rules"] == "yacht"
    assert {a["policy"]: "yahtzee" in a["rules"] for a in offered["agents"]} == {
        "random": True,
        "greedy": True,
        "optimal": True,
        "win": False,
    }


def test_a_forced_joker_is_refused_by_the_server_and_the_now_row_follows_it(client, service):
    # a game dealt two Yahtzees of sixes (a schema-1 header holds its dice), the first already in the Yahtzee box, stored
    # as the server's own game
    from tests.yacht_play.test_rule_set_play import dealt_faces
    from yacht_play.records import GameRecord

    rules = rule_set("yahtzee_forced_joker")
    header = {
        "schema": 1,
        "type": "game",
        "game_id": "dealt-forced",
        "mode": "solitaire",
        "rules": rules.name,
        "seed": 7,
        "coach": False,
        "time": "2026-11-30T20:00:00.000+00:00",
        "players": [
            {"seat": 0, "name": "dee", "kind": "human", "policy": None, "seed": 7, "faces": dealt_faces([[6] * 5, [6] * 5])}
        ],
    }
    match = Match.resume(GameRecord(header), dice_as_recorded=True)  # a stream no seed deals: as a server's own row
    match.play(rules.dice.num_rerolls + rules.yahtzee_row_index)
    secret = "dealt-forced-" + "x" * 20
    db.insert_game(service.engine, "dealt-forced", secret, "dee", header, match.decisions)  # yacht import would refuse it
    view = client.get(f"/api/games/{secret}").json()
    assert view["current"]["dice"] == [6] * 5 and view["current"]["now"] == {"sixes": 30}  # the only row allowed
    assert view["sheets"][0]["cells"][rules.yahtzee_row_index] == 50
    response = client.post(f"/api/games/{secret}/actions", json={"seq": view["seq"], "row": "chance"})
    assert response.status_code == 400
    assert "'chance', but the forced joker rule sends this Yahtzee to sixes" in response.json()["error"]
    assert len(stored(service, secret).decisions) == 1  # nothing changed


def test_the_report_takes_one_rule_set_at_a_time(tmp_path, monkeypatch):
    # a database of its own: the report counts every game there, so none of the other tests' games may be in it
    service = GameService(db.connect(str(tmp_path / "report.db")), ["optimal"])
    with TestClient(create_app(service)) as client:
        play_optimally(client, create(client, monkeypatch, "yahtzee", 2, coach=False, name="ann"))
        play_optimally(client, create(client, monkeypatch, "yacht", 1, coach=False, name="zed"))
        mixed = client.get("/api/report")
        assert mixed.status_code == 400 and "rule sets (yacht, yahtzee" in mixed.json()["error"]
        report = client.get("/api/report?rules=yahtzee").json()
        assert report["rules"] == "yahtzee" and report["games"] == 1
        assert report["optimal_expected_score"] == pytest.approx(254.5896094820)
        assert {p["name"] for p in report["people"]["players"]} == {"ann"}
        assert report["people"]["players"][0]["all"]["mean"] is not None
        yacht_report = client.get("/api/report?rules=yacht").json()
        assert yacht_report["games"] == 1 and {p["name"] for p in yacht_report["people"]["players"]} == {"zed"}
        assert client.get("/api/report?rules=nope").status_code == 400
        page = client.get("/report?rules=yahtzee")
        assert page.status_code == 200 and "under the yahtzee rules" in page.text


def test_a_model_trained_for_yacht_is_refused_for_a_yahtzee_game(tmp_path):
    pytest.importorskip("torch", reason="ppo agents need the train extra")
    model = "ppo:models/ppo.safetensors"
    shown = "ppo:ppo.safetensors"  # as a browser sees it: the file's name, not its path
    engine = db.connect(str(tmp_path / "ppo.db"))
    service = GameService(engine, ["optimal", model])
    with TestClient(create_app(service)) as client:
        offered = {a["policy"]: a["rules"] for a in client.get("/api/agents").json()["agents"]}
        assert offered[shown] == ["yacht"] and "yahtzee" in offered["optimal"]
        response = client.post("/api/games", json={"name": "ann", "mode": "duplicate", "agents": [model], "rules": "yahtzee"})
        assert response.status_code == 400
        assert response.json()["error"] == (
            f"agent {shown!r} is a model trained for the yacht rules; this game plays yahtzee: "
            "choose random, greedy, optimal or a model trained for yahtzee"
        )
        assert db.all_games(engine) == []
        response = client.post("/api/games", json={"name": "ann", "mode": "duplicate", "agents": [model], "rules": "yacht"})
        assert response.status_code == 201


def test_a_server_of_yacht_offers_a_yahtzee_model_for_yahtzee_games(tmp_path):
    """A model of other rules than the lobby's is loaded at start for its own rules, and plays games of those."""
    pytest.importorskip("torch", reason="ppo agents need the train extra")
    model = "ppo:models/yahtzee.safetensors"
    service = GameService(db.connect(str(tmp_path / "other.db")), [model])
    assert service.rules.name == "yacht" and (model, "yahtzee") in service.policies
    with TestClient(create_app(service)) as client:
        body = {"name": "ann", "mode": "duplicate", "agents": [model], "rules": "yahtzee"}
        assert client.post("/api/games", json=body).status_code == 201


def test_the_server_names_every_rule_set_and_mode_for_the_pages(client, monkeypatch):
    # the pages keep no names of their own: the lobby, the game's view and a player's games carry them
    offered = client.get("/api/agents").json()
    assert list(offered["rule_titles"]) == list(RULE_SETS)
    assert offered["rule_titles"]["yahtzee_forced_joker"] == "Yahtzee (official forced joker)"
    assert offered["modes"] == {"solitaire": [0, 0], "table": [1, 4], "duplicate": [1, 1]}
    secret = create(client, monkeypatch, "yacht_exercism", seed=5, name="titled")
    title = "Yacht (Exercism: four of a kind scores four dice)"
    assert client.get(f"/api/games/{secret}").json()["rules"]["title"] == title
    assert [g["rules_title"] for g in client.get("/api/players/titled").json()["games"]] == [title]
