"""The coach (:mod:`yacht_play.coach`): one verdict per decision for the terminal, the browser and ``yacht analyze``.

The options it lists, best first and each once; a loss that is the best value minus the chosen one, as the recorded
grades have it; the terminal and the server coaching the same position alike; the server asking the registry about
no agent once it runs; and the server's modules standing apart from the command lines.
"""

from __future__ import annotations

import ast
import dataclasses

import numpy as np
import pytest

from tests.test_layers import import_graph, project_modules
from yacht_env.actions import ActionLayout
from yacht_env.rules import YACHT, rule_set
from yacht_play.coach import Coaching, Grader, coach_decision, coaching_of
from yacht_play.match import Match, Player
from yacht_play.records import RecordError
from yacht_play.terminal import ScriptedConsole, coaching_text
from yacht_play.terminal import main as play_main

LAYOUT = ActionLayout(YACHT)
CHOICE, LITTLE_STRAIGHT = YACHT.category_names.index("choice"), YACHT.category_names.index("little_straight")


def tied_rows_q() -> np.ndarray:
    """Q-values after the last roll of 1 2 3 4 5: Choice and Little Straight both best (10), the other rows below."""
    q = np.full(LAYOUT.num_actions, -np.inf)
    for row in range(YACHT.num_rows):
        q[LAYOUT.score_action(row)] = 10.0 if row in (CHOICE, LITTLE_STRAIGHT) else 2.0 - 0.1 * row
    return q


def test_where_two_options_are_optimal_either_is_optimal_and_the_first_is_listed_first():
    q = tied_rows_q()
    coaching = coaching_of(q, LAYOUT.score_action(LITTLE_STRAIGHT), (1, 2, 3, 4, 5), 40, YACHT)
    assert coaching.loss == 0 and coaching.optimal
    assert not dataclasses.replace(coaching, loss=0.5).optimal  # half a point given away is not optimal
    assert coaching.best == "score Choice (15)" and coaching.chosen == "score Little Straight (30)"
    labels = [option.label for option in coaching.options]
    assert labels[:2] == ["score Choice (15)", "score Little Straight (30)"]  # tied: in the order of the actions
    assert len(labels) == len(set(labels)) == YACHT.num_rows  # each legal choice once, no illegal one
    assert [option.chosen for option in coaching.options][:3] == [False, True, False]
    assert [option.expected for option in coaching.options][:2] == [50.0, 50.0]
    expected = [option.expected for option in coaching.options]
    assert expected == sorted(expected, reverse=True)
    text = coaching_text(coaching, width=200)
    assert text.startswith("coach: score Little Straight (30) is optimal (expected final score 50.00)")
    assert "options: score Choice (15) 50.00 | score Little Straight (30) 50.00 | " in text


def test_choices_of_equal_value_rounded_apart_lose_nothing_and_list_in_action_order():
    """Scratching Little or Big Straight leaves mirror-image games of the same value, though the sums round apart
    (Big 9e-16 higher): scratching Little loses exactly 0, is optimal, is the best (the lower action) and is listed
    first, in the coach and in the recorded grades alike."""
    grader = Grader(YACHT)
    dice, rows = (1, 1, 3, 3, 6), ["little_straight", "big_straight"]
    q = grader.q_values(np.array([dice]), 0, grader.open_bits(rows))[0]
    little, big = LAYOUT.score_action(LITTLE_STRAIGHT), LAYOUT.score_action(LITTLE_STRAIGHT + 1)
    assert q[little] < q[big] == q.max()
    for action in (little, big):
        coaching = coaching_of(q, action, dice, 0, YACHT)
        assert coaching.loss == 0.0 and coaching.optimal and coaching.best_action == little
        assert f"{coaching.loss:.2f}" == "0.00"  # not "-0.00"
        assert [option.label for option in coaching.options] == ["score Little Straight (0)", "score Big Straight (0)"]
    decisions = [{"dice": list(dice), "rolls_left": 0, "open": rows, "action": action} for action in (little, big)]
    graded = grader.grade(decisions)
    assert graded.loss.tolist() == [0.0, 0.0] and graded.best_action.tolist() == [little, little]
    assert [f"{loss:.3f}" for loss in graded.loss] == ["0.000", "0.000"]


def test_re_rolls_that_keep_the_same_dice_are_one_option_at_their_value():
    """Re-rolling the first or the second of two equal dice is the same choice: listed once, and either is optimal
    where one is."""
    rules = YACHT
    grader = Grader(rules)
    dice = (3, 3, 4, 5, 6)
    q = grader.q_values(np.array([dice]), 2, rules.all_open)[0]
    first, second = (1 << 0), (1 << 1)  # re-roll one 3, or the other
    assert q[first] == q[second]
    one, other = coaching_of(q, first, dice, 0, rules), coaching_of(q, second, dice, 0, rules)
    assert one.chosen == other.chosen and one.loss == other.loss and one.options == other.options
    labels = [option.label for option in one.options]
    assert len(labels) == len(set(labels)) and labels.count(one.chosen) == 1
    assert sum(option.chosen for option in one.options) == 1
    best = coaching_of(q, int(np.argmax(q)), dice, 0, rules)
    assert best.options[0].label == best.best and best.options[0].chosen and best.loss == 0


@pytest.mark.parametrize("rules_name", ["yacht", "yahtzee"])
def test_the_loss_is_the_best_value_minus_the_chosen_one_as_the_recorded_grades_have_it(rules_name):
    rules = rule_set(rules_name)
    grader = Grader(rules)
    match = Match.new([Player("ann")], 12, rules=rules)
    rng = np.random.default_rng(12)
    coached: list[Coaching] = []
    while not match.finished:
        seat = match.current
        action = int(rng.choice(np.flatnonzero(seat.legal_mask())))
        q = grader.q_values(np.array([seat.dice]), seat.rolls_left, seat.open_bits, *seat.sheet_state)[0]
        coaching = coach_decision(grader, match, action)
        assert coaching.loss == float(q.max() - q[action]) >= 0
        assert coaching.loss == pytest.approx(coaching.best_expected - coaching.chosen_expected, abs=1e-9)
        assert coaching.chosen_expected == seat.total + q[action] and coaching.best_expected == seat.total + q.max()
        coached.append(coaching)
        match.play(action)
    graded = grader.grade(match.decisions)  # as yacht analyze, the end screen and the game-over page grade them
    assert [c.loss for c in coached] == pytest.approx(graded.loss.tolist(), abs=1e-12)
    assert any(c.loss > 0 for c in coached) and any(c.loss == 0 for c in coached)


def test_the_terminal_and_the_server_coach_the_same_position_alike(tmp_path, monkeypatch):
    """A table of two against greedy on the same seed: the person's decisions get the same coaching, chances of
    winning included, and the page's card and the terminal's lines both say it."""
    pytest.importorskip("sqlalchemy", reason="the server needs the serve extra: pip install 'yacht-rl[serve]'")
    import yacht_play.serve.games as games
    import yacht_play.terminal as terminal
    from yacht_play import store

    seen: dict[str, list[Coaching]] = {"terminal": [], "server": []}

    def kept(where: str, coach):
        def coach_and_keep(*args, **kwargs):
            seen[where].append(coach(*args, **kwargs))
            return seen[where][-1]

        return coach_and_keep

    monkeypatch.setattr(terminal, "coach_decision", kept("terminal", terminal.coach_decision))
    monkeypatch.setattr(games, "coach_decision", kept("server", games.coach_decision))
    seed = 21
    console = ScriptedConsole(["r all", "s 12", "q"])
    assert play_main(["--seed", str(seed), "--coach", "--vs", "greedy", "--record", str(tmp_path / "t.jsonl")], console) == 0

    monkeypatch.setattr(games.secrets, "randbits", lambda bits: seed)
    service = games.GameService(store.connect(str(tmp_path / "yacht.db")), ["greedy"])
    secret = service.create("ann", "table", ["greedy"], True)
    cards = [service.act(secret, {"seq": 0, "hold": []})["coach"]]
    cards.append(service.act(secret, {"seq": 1, "row": "yacht"})["coach"])  # the same turn's second roll

    # where the solved two-player game is not computed, the terminal says so once, the server on every card
    notes = {coaching.win_note for coaching in seen["server"]}
    assert len(seen["server"]) == 2 and len(notes) == 1
    note = notes.pop()
    if note is not None:
        assert f"Coach: {note}" in console.text and all(card["win_note"] == note for card in cards)
    assert seen["terminal"] == [dataclasses.replace(coaching, win_note=None) for coaching in seen["server"]]
    for coaching, card in zip(seen["server"], cards):
        assert coaching.options[0].chance is not None  # the chance of winning the game at hand
        assert coaching_text(coaching) in console.text
        assert (card["chosen"], card["best"], card["loss"]) == (coaching.chosen, coaching.best, coaching.loss)
        assert [(o["label"], o["expected"], o["win"]) for o in card["options"]] == [
            (o.label, o.expected, o.chance) for o in coaching.options[: games.COACH_OPTIONS]
        ]


def test_creating_a_game_asks_the_registry_about_no_agent_the_server_has_resolved(tmp_path, monkeypatch):
    """The server resolves each offered name to its spec when it starts; a game reads table sizes, rule sets, what
    the agent plays and how to build it from that spec."""
    pytest.importorskip("sqlalchemy", reason="the server needs the serve extra: pip install 'yacht-rl[serve]'")
    import agents.registry as registry
    from yacht_play import store
    from yacht_play.serve.games import GameService

    service = GameService(store.connect(str(tmp_path / "yacht.db")), ["greedy", "win"])
    asked = []
    find_policy = registry.find_policy
    monkeypatch.setattr(registry, "find_policy", lambda name: asked.append(name) or find_policy(name))
    service.create("ann", "table", ["greedy", "win"], False)  # win at a table of three: a table policy built now
    service.create("bob", "solitaire", [], False)
    service.create("cy", "duplicate", ["greedy"], False)
    assert asked == []


def command_line_modules() -> set[str]:
    """The modules that are a program: a ``main`` or ``configure`` of a command line, or a ``__main__`` block."""
    found = set()
    for name, path in project_modules().items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name in ("main", "configure"):
                found.add(name)
            elif isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                found.add(name)
    return found


# The /report page is built by the report's builders, which share their module with ``yacht report``'s command line.
REPORT_PAGE = ("yacht_play.serve.app", "yacht_play.report.build")


def test_the_server_imports_no_command_line_module_and_its_games_reach_none():
    graph, programs = import_graph(), command_line_modules()
    assert {"yacht_play.analyze", "yacht_play.terminal", "yacht_play.cli"} <= programs
    server = [name for name in graph if name.startswith("yacht_play.serve") and name != "yacht_play.serve.cli"]
    wrong = sorted((name, target) for name in server for target in graph[name] & programs if (name, target) != REPORT_PAGE)
    assert wrong == []
    reached, todo = set(), ["yacht_play.serve.games"]  # everything a game's request runs, imported at any depth
    while todo:
        for target in graph[todo.pop()] - reached:
            reached.add(target)
            todo.append(target)
    assert "yacht_play.coach" in reached and reached & programs == set()


def test_a_player_s_figures_are_the_sums_and_means_of_the_losses_optimal_gives_each_decision():
    """``yacht analyze``'s per-player figures, each recomputed here from the optimum's Q-values one decision at a time."""
    from agents.solvers.optimal import q_values
    from yacht_play.coach import report_players

    rng = np.random.default_rng(7)
    games = []
    for seed in (3, 4):
        match = Match.new([Player("ann")], seed=seed, mode="solitaire")
        while not match.finished:
            match.play(int(rng.choice(np.flatnonzero(match.current.legal_mask()))))
        games.append(match.game_record())
    decisions = [d for game in games for d in game.decisions]
    loss, chosen = [], []
    for d in decisions:
        open_rows = np.array([name in d["open"] for name in YACHT.category_names])
        q = q_values(d["dice"], 3 - d["roll"], open_rows, "yacht")
        loss.append(float(np.max(q) - q[d["action"]]))
        chosen.append(float(q[d["action"]]))
    loss = np.array(loss)
    is_row = np.array([d["points"] is not None for d in decisions])
    (report,) = report_players(games, Grader(YACHT), worst=3)
    assert report.games == report.finished_games == 2 and report.decisions == len(decisions)
    assert report.row_decisions == 2 * YACHT.num_rows and report.reroll_decisions == int((~is_row).sum()) > 0
    assert report.loss_per_row == pytest.approx(loss[is_row].mean(), abs=1e-9)
    assert report.loss_per_reroll == pytest.approx(loss[~is_row].mean(), abs=1e-9)
    assert report.losses_per_game == pytest.approx([loss[: len(games[0].decisions)].sum(), loss[len(games[0].decisions) :].sum()])
    turns = np.array([d["turn"] for d in decisions])
    assert [entry["turn"] for entry in report.by_turn] == list(range(1, 13))  # Yacht's twelve turns, each once
    for entry in report.by_turn:
        mine = turns == entry["turn"]
        assert entry["decisions"] == int(mine.sum())
        assert entry["loss_per_decision"] == pytest.approx(loss[mine].mean(), abs=1e-9)
        assert entry["loss_per_game"] == pytest.approx(loss[mine].sum() / 2, abs=1e-9)
    order = np.argsort(-loss, kind="stable")[:3]
    assert [w["loss"] for w in report.worst] == pytest.approx(loss[order].tolist(), abs=1e-9)
    for w, i in zip(report.worst, order):
        d = decisions[i]
        assert (w["game_id"], w["turn"], w["roll"], w["action"]) == (d["game_id"], d["turn"], d["roll"], d["action"])
        assert w["expected_final_best"] - w["expected_final_chosen"] == pytest.approx(w["loss"], abs=1e-9)
    # every decision that lost something: the total before it (a row's points are in the recorded total already) plus
    # what is still to come
    (every,) = report_players(games, Grader(YACHT), worst=len(decisions))
    listed = {(w["game_id"], w["turn"], w["roll"]): w for w in every.worst}
    rows_listed = 0
    for i, d in enumerate(decisions):
        w = listed.get((d["game_id"], d["turn"], d["roll"]))
        if w is not None:
            assert w["expected_final_chosen"] == pytest.approx(d["total"] - (d["points"] or 0) + chosen[i], abs=1e-9)
            rows_listed += bool(d["points"])
    assert rows_listed > 0


def test_grading_names_the_first_decision_that_records_an_illegal_action():
    choice, ones = LAYOUT.score_action(CHOICE), LAYOUT.score_action(0)
    decisions = [
        {"game_id": "g", "turn": 1, "roll": 3, "dice": [1, 2, 3, 4, 5], "rolls_left": 0, "open": ["choice"], "action": choice},
        # scoring Ones where only Choice is open, then re-rolling no dice: both illegal, the first is the one named
        {"game_id": "g", "turn": 2, "roll": 1, "dice": [1, 1, 2, 3, 6], "rolls_left": 2, "open": ["choice"], "action": ones},
        {"game_id": "g", "turn": 3, "roll": 2, "dice": [2, 2, 2, 5, 6], "rolls_left": 1, "open": ["choice"], "action": 0},
    ]
    with pytest.raises(RecordError, match=f"^game g: turn 2, roll 1 records the illegal action {ones}$"):
        Grader(YACHT).grade(decisions)
    for action in (-1, LAYOUT.num_actions):  # no action of the game at all: the range of actions named
        outside = [{**decisions[0], "action": action}]
        with pytest.raises(RecordError, match=rf"^a decision record holds an action outside 0\.\.{LAYOUT.num_actions - 1}$"):
            Grader(YACHT).grade(outside)


def chance_of_at_least(dice: list[int], needed: int) -> float:
    """The chance that ``dice`` fresh dice sum to at least ``needed``, counted over every equally likely roll."""
    rolls = np.array(np.meshgrid(*[np.arange(1, 7)] * len(dice))).reshape(len(dice), -1).sum(axis=0)
    return float((rolls >= needed).mean())


def test_a_solitaire_coach_with_a_target_gives_each_option_its_chance_of_finishing_on_the_target():
    """The last turn with only Choice open and one roll left: the final score is the points so far plus the sum of the
    dice kept and of those re-rolled, so each option's chance of reaching the target is a count of equally likely
    rolls of the re-rolled dice; scoring now reaches it or not."""
    from yacht_play.commands import choice_label

    match = Match.new([Player("ann")], 5, "solitaire", YACHT)
    for row in [row for row in range(YACHT.num_rows) if row != CHOICE]:
        match.play(LAYOUT.score_action(row))
    match.play(LAYOUT.first_score_action - 1)  # re-roll all five dice
    seat = match.current
    assert seat.open_names == ["choice"] and seat.rolls_left == 1 and seat.total > 0
    dice, grader = list(seat.dice), Grader(YACHT)
    for needed in (8, sum(dice), sum(dice) + 1, 27):
        target = seat.total + needed
        coaching = coach_decision(grader, match, LAYOUT.score_action(CHOICE), target=target)
        assert coaching.chances_label == f">={target}"
        chances = {option.label: option.chance for option in coaching.options}
        assert coaching.chosen_chance == chances[coaching.chosen] == float(sum(dice) >= needed)
        for action in range(1, LAYOUT.first_score_action):
            rerolled = YACHT.dice.reroll_positions[action]
            kept = sum(d for i, d in enumerate(dice) if i not in rerolled)
            expected = chance_of_at_least([dice[i] for i in rerolled], needed - kept)
            assert chances[choice_label(action, dice, YACHT, seat.open_bits)] == pytest.approx(expected, abs=1e-12)


# -- beside the chances: a shipped table planner's learned ones -------------------------------


def yacht_table_decisions(seed: int, turns: int):
    """``(match, action)`` at each of ann's decisions for ``turns`` turns at a Yacht table of three (ann, optimal,
    greedy), before the action is played; the agents play their own turns."""
    match = Match.new(
        [Player("ann"), Player("optimal", "agent", "optimal"), Player("greedy", "agent", "greedy")], seed, "table", YACHT
    )
    rng = np.random.default_rng(seed)
    while not match.finished and match.current.turn <= turns:
        if match.current.kind == "agent":
            match.play_agent()
            continue
        action = int(rng.choice(np.flatnonzero(match.current.legal_mask())))
        yield match, action
        match.play(action)


def planner_values(planner, match) -> np.ndarray:
    """The planner's own ``action_values`` for the seat to move, the table read from the mover on in play order."""
    from agents.learned.planN import Tables

    seat = match.current
    at = match.seats.index(seat)
    order = match.seats[at:] + match.seats[:at]
    upper = [[min(s.sheet_state[0], YACHT.upper_cap) for s in order]]
    tables = Tables(
        np.array([[s.open_bits for s in order]]),
        np.array(upper),
        np.zeros((1, 3), np.int64),
        np.array([[s.total for s in order]]),
    )
    return planner.action_values(tables, [seat.hand], [seat.rolls_left])[0]


def test_at_a_yacht_table_of_three_each_option_has_its_chance_and_the_shipped_planners_learned_one_beside_it(
    tmp_path, monkeypatch
):
    from agents.learned.planN import PlanNPolicy
    from agents.solvers.win_chances import win_probabilities
    from tests.agents.test_planN import ship_planN
    from yacht_play.commands import choice_label

    planner = PlanNPolicy.load(str(ship_planN(monkeypatch, tmp_path, YACHT, seed=3)), YACHT, 3).planner
    grader, coached = Grader(YACHT), 0
    for match, action in yacht_table_decisions(seed=8, turns=4):
        seat = match.current
        coaching = coach_decision(grader, match, action)
        learned = planner_values(planner, match)
        others = [(s.total, s.open_names) for s in match.seats if s is not seat]
        win = win_probabilities(seat.dice, seat.rolls_left, seat.open_names, seat.total, others, YACHT)
        options = {option.label: option for option in coaching.options}
        for a in np.flatnonzero(seat.legal_mask()):  # every action of an option's label is valued alike, both ways
            option = options[choice_label(int(a), seat.dice, YACHT, seat.open_bits)]
            assert option.learned_chance == learned[a] and option.chance == win[a]
        assert coaching.chances_label == "win" and coaching.chosen_learned_chance == learned[action]
        coached += 1
    assert coached >= 8


def test_without_a_shipped_planner_the_coach_gives_no_learned_figure_and_nothing_else_changes(tmp_path, monkeypatch):
    import agents.learned.planN_files
    from tests.agents.test_planN import ship_planN

    shipped, bare = tmp_path / "shipped", tmp_path / "bare"
    shipped.mkdir(), bare.mkdir()
    ship_planN(monkeypatch, shipped, YACHT, seed=3)
    grader, coached = Grader(YACHT), 0
    for match, action in yacht_table_decisions(seed=9, turns=3):
        monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", bare)
        without = coach_decision(grader, match, action)
        monkeypatch.setattr(agents.learned.planN_files, "SHIPPED_PLANN", shipped)
        beside = coach_decision(grader, match, action)
        assert without.chosen_learned_chance is None and all(o.learned_chance is None for o in without.options)
        assert all(o.learned_chance is not None for o in beside.options)
        unlearned = tuple(dataclasses.replace(o, learned_chance=None) for o in beside.options)
        assert without == dataclasses.replace(beside, options=unlearned, chosen_learned_chance=None)
        assert "learned" not in coaching_text(without)
        coached += 1
    assert coached >= 6


def test_the_terminal_coach_names_the_learned_chances_beside_the_chances_of_winning(tmp_path, monkeypatch):
    from tests.agents.test_planN import ship_planN

    ship_planN(monkeypatch, tmp_path, YACHT, seed=3)
    (match, action), *_ = yacht_table_decisions(seed=8, turns=1)
    coaching = coach_decision(Grader(YACHT), match, action)
    first = coaching.options[0]
    line = coaching_text(coaching).splitlines()[-1]
    figures = f"(win {100 * first.chance:.0f}%, learned win {100 * first.learned_chance:.0f}%)"
    assert line.startswith(f"       options: {first.label} {first.expected:.2f} {figures}")
    assert len(line) <= 80
    console = ScriptedConsole(["r all", "s 12", "q"])  # the game as typed: its coach's lines say it too
    record = ["--record", str(tmp_path / "t.jsonl")]
    assert play_main(["--seed", "4", "--coach", "--vs", "optimal", "--vs", "greedy", *record], console) == 0
    assert "learned win" in console.text


def test_only_a_two_player_table_without_bonuses_or_jokers_is_graded_in_chances_of_winning():
    from yacht_play.coach import two_player_grading

    for rules, mode, players in (
        ("yacht", "table", 1),
        ("yacht", "table", 3),
        ("yacht", "duplicate", 2),
        ("yahtzee", "table", 2),
    ):
        assert two_player_grading(rule_set(rules), mode, players) is None, (rules, mode, players)
    assert two_player_grading(YACHT, "table", 2) is not None


def test_a_player_s_report_starts_with_nothing_counted_and_no_figure():
    # a report is filled from the player's decisions: before any, it counts none and has no mean to show
    from yacht_play.coach import PlayerReport

    fresh = PlayerReport("ann", "human", "records")
    counts = ("games", "finished_games", "decisions", "reroll_decisions", "row_decisions", "win_decisions")
    assert [getattr(fresh, name) for name in counts] == [0] * len(counts)
    assert fresh.scores == fresh.losses_per_game == fresh.by_turn == fresh.worst == fresh.win_worst == []
    assert fresh.label == "ann" and PlayerReport("greedy", "agent", "replay").label == "greedy (replay)"
