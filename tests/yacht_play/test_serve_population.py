"""The population report recovers what simulated people put in: their loss per decision, their win rates;
and ``yacht report`` / ``/report`` state every figure's n, refuse intervals on too few, escape names."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the simulated people need httpx")

from tests.yacht_play.test_serve_api import TestClient  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.cli import main  # noqa: E402
from yacht_play.report.build import build_report  # noqa: E402
from yacht_play.report.estimates import estimate  # noqa: E402
from yacht_play.report.filters import Filters  # noqa: E402
from yacht_play.report.results import Report  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402
from yacht_play.simulate import Chooser, Played, run_sync  # noqa: E402


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    engine = db.connect(str(tmp_path_factory.mktemp("population") / "yacht.db"))
    return GameService(engine, ["greedy", "optimal"])


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service)) as client:
        yield client


def simulate(client, names, games, temperature, mode, agents, seed) -> list[Played]:
    out = []
    for i, name in enumerate(names):
        chooser = Chooser(temperature, np.random.default_rng(seed + i))
        for g in range(games):
            played = run_sync(client, chooser, Played(name, mode, list(agents)))
            assert not played.errors and played.winners is not None
            out.append(played)
    return out


def report_of(service, **filters) -> Report:
    return build_report(db.all_games(service.engine, finished_only=True), Filters(**filters), service.grader)


def test_the_report_recovers_the_simulated_loss_per_decision(client, service, monkeypatch):
    # The server deals from unguessable seeds; seeded here so that the test is one fixed draw, not a
    # 95% interval that fails on its own one run in twenty.
    deals = np.random.default_rng(2024)
    monkeypatch.setattr("yacht_play.serve.games.secrets.randbits", lambda bits: int(deals.integers(0, 2**bits)))
    played = simulate(client, ["noisy-a", "noisy-b"], 2, 1.5, "duplicate", ["greedy"], seed=10)
    report = report_of(service, mode="duplicate")
    people = {p.name: p for p in report.people.players}
    for name in ("noisy-a", "noisy-b"):
        mine = [p for p in played if p.name == name]
        expected = np.mean([x for p in mine for x in p.expected_losses])
        figure = people[name].all
        assert figure.n == sum(len(p.acknowledged) for p in mine)  # every acknowledged decision, once
        assert figure.low <= expected <= figure.high, (name, expected, figure)
        assert 0.2 < expected  # a temperature of 1.5 points loses something
    pooled = report.people.population.pooled.all
    expected = np.mean([x for p in played for x in p.expected_losses])
    assert pooled.low <= expected <= pooled.high and pooled.n == sum(len(p.acknowledged) for p in played)
    # two people: no interval over the population, and the note says so
    over_people = report.people.population.over_people.all
    assert over_people.n == 2 and over_people.low is None and "n=2 < 10" in over_people.note
    # the win rate is what the people saw at the end of each game (a shared first place counts 1/2)
    greedy = next(a for a in report.agents_vs_people if a.policy == "greedy")
    shares = [1.0 if p.totals[1] > p.totals[0] else 0.5 if p.totals[1] == p.totals[0] else 0.0 for p in played]
    assert greedy.games == 4 and greedy.people == 2
    assert greedy.win_rate.mean == pytest.approx(np.mean(shares))
    assert greedy.win_rate.low is None and "n=4 < 10" in greedy.win_rate.note
    graded = {a.policy: a for a in report.agents_graded}
    assert graded["greedy"].all.mean > 0 and graded["greedy"].games == 4


def test_an_optimal_person_ties_the_optimum_on_the_same_dice(client, service):
    # temperature 0 is the optimum with its tie-break: on the same dice, every game is a tie
    played = simulate(client, ["perfect-a", "perfect-b"], 5, 0.0, "duplicate", ["optimal"], seed=20)
    assert all(p.totals[0] == p.totals[1] for p in played)
    report = report_of(service, mode="duplicate")
    optimal = next(a for a in report.agents_vs_people if a.policy == "optimal")
    assert optimal.games == 10 and optimal.people == 2
    assert optimal.win_rate.mean == optimal.win_rate.low == optimal.win_rate.high == 0.5
    assert optimal.score_difference.mean == 0.0
    paired = next(d for d in report.duplicate if d.policy == "optimal").person_minus_agent
    assert paired.n == 10 and paired.mean == paired.low == paired.high == 0.0
    one = report_of(service, player="perfect-a")
    people = one.people.players
    assert [p.name for p in people] == ["perfect-a"] and people[0].all.mean == 0.0
    optimal_one = next(a for a in one.agents_vs_people if a.policy == "optimal")
    assert optimal_one.games == 5 and optimal_one.win_rate.low is None  # 5 games: too few
    assert [b.loss_per_decision.n for b in one.people.by_games_played[:4]] == [1, 1, 2, 1]


def test_too_few_values_give_no_interval():
    assert estimate([], "games").note == "no games"
    few = estimate([1.0, 2.0, 3.0], "games")
    assert few.mean == 2.0 and few.low is None and "n=3 < 10" in few.note
    lonely = estimate(np.arange(20.0), "games", players=1)
    assert lonely.low is None and "one person" in lonely.note
    enough = estimate(np.arange(20.0), "games", players=3)
    assert enough.low < 9.5 < enough.high and enough.note is None and enough.n == 20


def test_yacht_report_writes_json_and_plot_and_refuses_bad_filters(client, service, tmp_path, capsys):
    simulate(client, ["cli-a"], 1, 1.0, "solitaire", [], seed=30)
    url = str(service.engine.url.database)
    assert (
        main(
            ["report", "--db", url, "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png"), "--mode", "solitaire"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "cli-a" in out and "n=" in out
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["filters"]["mode"] == "solitaire" and document["games"] >= 1
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["report", "--db", url, "--since", "2999-01-01"]) == 0
    assert "0 finished games" in capsys.readouterr().out
    assert main(["report", "--db", url, "--since", "last tuesday"]) == 2
    err = capsys.readouterr().err
    assert "--since 'last tuesday' is not a date" in err and "Traceback" not in err
    assert main(["report", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no database" in capsys.readouterr().err


def test_the_report_page_escapes_names(client, service):
    name = "<img src=x onerror=alert(1)>"
    simulate(client, [name], 1, 1.0, "solitaire", [], seed=40)
    page = client.get("/report")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.text and name not in page.text
    data = client.get("/api/report", params={"player": name}).json()
    assert [p["name"] for p in data["people"]["players"]] == [name]
    bad = client.get("/api/report", params={"since": "<script>"})
    assert bad.status_code == 400 and "is not a date" in bad.json()["error"]
    assert client.get("/api/report", params={"mode": "chess"}).status_code == 400


def test_the_report_takes_the_modes_people_play_and_names_them(client, capsys):
    refused = client.get("/api/report", params={"mode": "evaluation"})  # a record's mode, never a served game's
    assert refused.status_code == 400
    assert refused.json()["error"] == "mode 'evaluation' is not a mode; choose one of solitaire, table, duplicate"
    with pytest.raises(SystemExit):
        main(["report", "--mode", "evaluation"])
    assert "invalid choice: 'evaluation' (choose from 'solitaire', 'table', 'duplicate')" in capsys.readouterr().err


def test_the_report_is_built_again_only_when_a_game_finishes(tmp_path, monkeypatch):
    import yacht_play.report.build

    builds = []
    build = yacht_play.report.build.build_report
    monkeypatch.setattr(yacht_play.report.build, "build_report", lambda *args, **kw: builds.append(1) or build(*args, **kw))
    service = GameService(db.connect(str(tmp_path / "yacht.db")), ["greedy"])
    with TestClient(create_app(service)) as client:
        simulate(client, ["kept-a"], 1, 1.0, "solitaire", [], seed=50)
        first, again = (client.get("/api/report").json() for _ in range(2))
        assert first == again and again["games"] == 1 and len(builds) == 1  # the same finished games: the report kept
        assert client.get("/api/report", params={"mode": "solitaire"}).json()["games"] == 1 and len(builds) == 2
        pages = [client.get("/report") for _ in range(2)]  # the page names the server's rules: other filters
        assert [page.status_code for page in pages] == [200, 200] and pages[0].text == pages[1].text and len(builds) == 3
        unfinished = client.post("/api/games", json={"name": "kept-b", "mode": "solitaire", "agents": []})
        assert unfinished.status_code == 201 and client.get("/api/report").json()["games"] == 1 and len(builds) == 3
        simulate(client, ["kept-b"], 1, 1.0, "table", ["greedy"], seed=51)
        after = client.get("/api/report").json()
        assert after["games"] == 2 and len(builds) == 4  # a game finished: built again, with it
        assert {p["name"] for p in after["people"]["players"]} == {"kept-a", "kept-b"}
