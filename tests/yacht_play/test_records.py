"""Game records are untrusted input: one strict validator (schema, then a replay against the dice)
behind `yacht play --resume` and `yacht analyze`; one-line errors naming file, line and field."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yacht_play.analyze import main as analyze_main
from yacht_play.match import Match, Player, load_games, write_agent_games
from yacht_play.records import GameRecord, RecordError, RecordWriter, check_line, read_records
from yacht_play.terminal import ScriptedConsole
from yacht_play.terminal import main as play_main

ROOT = Path(__file__).resolve().parents[2]
PLAN = [command for turn in range(1, 13) for command in ([[], ["r 1 2"], ["r 3 4 5", "r1"]][turn % 3] + [f"s {turn}"])]


def table_game(path: Path, decisions: int | None = None) -> Path:
    """A table game of a person (scripted) and two agents, whole or cut after ``decisions`` decisions."""
    players = [Player("ann"), Player("greedy", "agent", "greedy"), Player("optimal", "agent", "optimal")]
    match = Match.new(players, seed=40, mode="table")
    plan = iter(PLAN)
    with RecordWriter(path) as writer:
        match.record_to(writer)
        while not match.finished and (decisions is None or len(match.decisions) < decisions):
            if match.current.kind == "agent":
                match.play_agent()
                continue
            from yacht_play.commands import parse_command

            seat = match.current
            match.play(parse_command(next(plan), seat.dice, seat.rolls_left, seat.open_bits, match.rules).action, 1.5)
    return path


@pytest.fixture(scope="module")
def real_records(tmp_path_factory) -> list[bytes]:
    """Real record files: two finished agent games, a finished table game, an unfinished one."""
    folder = tmp_path_factory.mktemp("records")
    write_agent_games(folder / "agents.jsonl", "greedy", games=2, seed=3)
    return [
        (folder / "agents.jsonl").read_bytes(),
        table_game(folder / "table.jsonl").read_bytes(),
        table_game(folder / "unfinished.jsonl", decisions=40).read_bytes(),
    ]


def edit_line(data: bytes, index: int, change) -> bytes:
    lines = data.split(b"\n")
    record = json.loads(lines[index])
    change(record)
    lines[index] = json.dumps(record, separators=(",", ":")).encode()
    return b"\n".join(lines)


def analyze(path, *extra, capsys):
    capsys.readouterr()
    code = analyze_main([str(path), *extra])
    return code, capsys.readouterr()


def resume(path, capsys):
    capsys.readouterr()
    code = play_main(["--resume", str(path)], ScriptedConsole([]))
    return code, capsys.readouterr()


def first_decision_index(data: bytes, kind="human") -> int:
    for index, line in enumerate(data.split(b"\n")):
        if line and json.loads(line)["type"] == "decision" and json.loads(line)["kind"] == kind:
            return index
    raise AssertionError("no decision")


def set_key(key, value):
    return lambda record: record.__setitem__(key, value)


CORRUPTIONS = {  # defect 3: each was graded silently, exit 0
    "duplicated decision": (lambda d, i: b"\n".join(d.split(b"\n")[: i + 1] + d.split(b"\n")[i:]), "does not fit the game"),
    "edited die": (lambda d, i: edit_line(d, i, lambda r: r["dice"].__setitem__(0, 7 - r["dice"][0])), "field 'dice'"),
    "inflated points": (
        lambda d, i: edit_line(d, i + 1, lambda r: r.__setitem__("points", (r["points"] or 0) + 10)),
        "field 'points'",
    ),
    "inflated total": (lambda d, i: edit_line(d, i, lambda r: r.__setitem__("total", r["total"] + 10)), "field 'total'"),
    "turn as text": (lambda d, i: edit_line(d, i, set_key("turn", "1")), "field 'turn': expected an integer, got '1'"),
    "action true": (lambda d, i: edit_line(d, i, set_key("action", True)), "field 'action': expected an integer, got True"),
    "action 33.0": (lambda d, i: edit_line(d, i, set_key("action", 33.0)), "field 'action': expected an integer, got 33.0"),
    "edited open rows": (lambda d, i: edit_line(d, i, lambda r: r["open"].pop()), "field 'open'"),
    "decision of an older schema": (
        lambda d, i: edit_line(d, i, set_key("schema", 1)),
        "field 'schema': expected 2 as in the game's header, got 1",
    ),
    "endless seconds": (
        lambda d, i: edit_line(d, i, set_key("seconds", float("inf"))),
        "field 'seconds': expected a finite number, got inf",
    ),
    "edited roll": (lambda d, i: edit_line(d, i, lambda r: r.__setitem__("roll", r["roll"] % 3 + 1)), "field 'roll'"),
    "reordered lines": (
        lambda d, i: b"\n".join(d.split(b"\n")[:i] + [d.split(b"\n")[i + 1], d.split(b"\n")[i]] + d.split(b"\n")[i + 2 :]),
        "does not fit the game",
    ),
    "inflated end totals": (
        lambda d, i: edit_line(d, len(d.split(b"\n")) - 2, lambda r: r["totals"].__setitem__(0, r["totals"][0] + 1)),
        "field 'totals'",
    ),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_analyze_refuses_records_that_do_not_replay_with_one_line(tmp_path, capsys, real_records, name):
    corrupt, message = CORRUPTIONS[name]
    data = real_records[1]
    path = tmp_path / "game.jsonl"
    path.write_bytes(corrupt(data, first_decision_index(data)))
    code, out = analyze(path, capsys=capsys)
    assert code == 2 and message in out.err and out.err.count("\n") == 1, out.err
    assert f"{path}:" in out.err and out.out == ""
    code, out = resume(path, capsys)  # the same validator behind --resume
    assert code == 2 and message in out.err and out.err.count("\n") == 1


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("game_id", ["x"], "field 'game_id': expected a string, got ['x']"),
        ("seconds", None, "field 'seconds': expected a number, got None"),
        ("total", None, "field 'total': expected an integer, got None"),
        ("action", 33.0, "field 'action': expected an integer, got 33.0"),
        ("rules", ["yacht"], "field 'rules': expected a string, got ['yacht']"),
        ("players", [{"seat": 0}], "field 'players.0.name': expected present"),
    ],
)
def test_malformed_fields_give_one_line_naming_line_and_field(tmp_path, capsys, real_records, field, value, expected):
    """Defect 4: wrongly typed fields gave TypeError / IndexError tracebacks."""
    data = real_records[2]
    index = 0 if field in ("rules", "players") else first_decision_index(data)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(edit_line(data, index, set_key(field, value)))
    for code, out in (resume(path, capsys), analyze(path, capsys=capsys)):
        assert code == 2 and f"bad.jsonl:{index + 1}: " in out.err and expected in out.err, out.err
        assert out.err.count("\n") == 1 and "Traceback" not in out.err


def test_a_header_without_its_seed_is_refused_in_one_line(tmp_path, capsys, real_records):
    """From schema 2 the seats' dice come from the header's seed: a header whose seed is cleared names no game."""
    for data in real_records:
        path = tmp_path / "no_seed.jsonl"
        path.write_bytes(edit_line(data, 0, set_key("seed", None)))
        for code, out in (resume(path, capsys), analyze(path, capsys=capsys)):
            assert (
                code == 2
                and "no_seed.jsonl:1: game record, field 'seed': expected the game's seed (schema 2), got None" in out.err
            )
            assert out.err.count("\n") == 1 and "Traceback" not in out.err


def swap_first_two_seats(header: dict) -> None:
    header["players"][0]["seat"], header["players"][1]["seat"] = header["players"][1]["seat"], header["players"][0]["seat"]


def test_a_header_with_its_seats_out_of_order_is_refused_before_any_decision(tmp_path, capsys, real_records):
    """A header alone (a game not started) has no decision to replay: its seat numbers are checked on their own."""
    header = real_records[1].split(b"\n")[0] + b"\n"
    path = tmp_path / "header.jsonl"
    path.write_bytes(header)
    assert len(read_records(path).games) == 1  # as written, a header alone is a game that has not started
    path.write_bytes(edit_line(header, 0, lambda h: h["players"][1].__setitem__("seat", 0)))  # two seats 0
    with pytest.raises(RecordError, match=r"header.jsonl:1: game record, field 'players.1.seat': expected 1, got 0$"):
        read_records(path)
    path.write_bytes(edit_line(header, 0, swap_first_two_seats))
    with pytest.raises(RecordError, match=r"header.jsonl:1: game record, field 'players.0.seat': expected 0, got 1$"):
        read_records(path)
    code, out = resume(path, capsys)
    assert code == 2 and "field 'players.0.seat': expected 0, got 1" in out.err and out.err.count("\n") == 1


def test_analyze_counts_each_game_once(tmp_path, capsys, real_records):
    """Defect 9: the same file twice merged into one game with twice the decisions."""
    path = tmp_path / "game.jsonl"
    path.write_bytes(real_records[1])
    code, out = analyze(path, str(path), capsys=capsys)
    assert code == 2 and "given twice" in out.err
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(real_records[1])
    code, out = analyze(path, str(copy), capsys=capsys)
    assert code == 2 and "is already in" in out.err and out.err.count("\n") == 1
    code, out = analyze(path, capsys=capsys)
    assert code == 0 and "ann" in out.out


@pytest.mark.parametrize("agent", ["target:150", "win"])
def test_analyze_refuses_an_agent_that_reads_the_tables_totals_in_one_line(tmp_path, capsys, real_records, agent):
    """A replay alone has no totals of other players to read: target:T ended in a KeyError traceback."""
    path = tmp_path / "game.jsonl"
    path.write_bytes(real_records[1])
    code, out = analyze(path, "--agent", agent, capsys=capsys)
    assert code == 2 and out.out == "" and out.err.count("\n") == 1 and "Traceback" not in out.err
    assert f"--agent: {agent!r} reads the table's totals" in out.err and "choose random, greedy, optimal" in out.err


def test_analyze_worst_must_be_positive_and_plot_names_its_extra(tmp_path, capsys, real_records):
    """Defect 8/9: --worst -1 was accepted, --worst 0 said "no decision lost anything"; --plot without
    matplotlib crashed after the report."""
    path = tmp_path / "game.jsonl"
    path.write_bytes(real_records[1])
    for worst in ("0", "-1"):
        with pytest.raises(SystemExit) as exit:
            analyze(path, "--worst", worst, capsys=capsys)
        out = capsys.readouterr()
        assert exit.value.code == 2 and f"--worst: expected a number of decisions, 1 or more, got {worst}" in out.err
        assert out.out == ""
    code = (
        "import sys; sys.modules['matplotlib'] = None; from yacht_play.analyze import main; "
        f"sys.exit(main([{str(path)!r}, '--plot', {str(tmp_path / 'p.png')!r}]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "pip install 'yacht-rl[train]'" in result.stderr and result.stdout == ""
    code = (
        "import sys; sys.modules['matplotlib'] = None; from agents.evaluate import main; "
        f"main(['--policy', 'greedy', '--games', '4', '--no-progress', '--plot', {str(tmp_path / 'p.png')!r}])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "--plot needs matplotlib: pip install 'yacht-rl[train]'" in result.stderr


def test_a_record_in_progress_holds_no_future_dice(tmp_path, capsys):
    """Defect 9: the header held every seat's whole dice stream, so the coming rolls could be read."""
    path = tmp_path / "game.jsonl"
    assert play_main(["--seed", "7", "--record", str(path)], ScriptedConsole(PLAN[:3] + ["q"])) == 0
    header, *decisions = [json.loads(line) for line in path.read_text().splitlines()]
    assert "faces" not in json.dumps(header) and all("faces" not in player for player in header["players"])
    seen = [d["dice"] for d in decisions]
    assert len(seen) == 3  # the dice rolled so far are in the decisions, nothing ahead of them
    console = ScriptedConsole(PLAN[3:])
    assert play_main(["--resume", str(path)], console) == 0  # the rest is derived from the seed
    assert read_records(path).games[0].finished


def test_schema_1_records_with_dice_streams_still_read(tmp_path, real_records):
    from yacht_play.match import dice_stream

    old = []
    for line in real_records[0].decode().splitlines():
        record = json.loads(line)
        record["schema"] = 1
        if record["type"] == "game":
            for player in record["players"]:
                player["faces"] = dice_stream(player["seed"]).tolist()
        old.append(json.dumps(record))
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(old) + "\n")
    assert len(load_games(path).games) == 2
    unfinished = tmp_path / "old-unfinished.jsonl"  # a schema 1 game resumed goes on in schema 1
    unfinished.write_text("\n".join(old[:20]) + "\n")
    assert play_main(["--resume", str(unfinished)], ScriptedConsole([])) == 0
    games = load_games(unfinished).games
    assert games[-1].finished and {line["schema"] for line in games[-1].lines()} == {1}
    # a schema 1 header must write each seat's stream down, and its decisions are schema 1 too
    no_stream = [json.loads(line) for line in old[:3]]
    del no_stream[0]["players"][0]["faces"]
    path.write_text("\n".join(json.dumps(record) for record in no_stream) + "\n")
    with pytest.raises(RecordError, match=r"old.jsonl:1: game record, field 'players.0.faces': expected the dice stream"):
        read_records(path)
    newer = [json.loads(line) for line in old[:3]]
    newer[1]["schema"] = 2
    path.write_text("\n".join(json.dumps(record) for record in newer) + "\n")
    with pytest.raises(RecordError, match=r"old.jsonl:2: field 'schema': expected 1 as in the game's header, got 2$"):
        read_records(path)


# -- fuzzing -------------------------------------------------------------------------------------

FREE_FIELDS = {"time", "seconds", "coach", "policy"}  # not derivable from the game: any well-typed value is honest
SWAPS = [None, True, False, 0, 1, -1, 3, 33.0, 1.5, "1", "x", "", [], [1], {}, {"a": 1}]


def paths_in(value, prefix=()):
    """Every (path, leaf or container) inside a record."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_in(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_in(item, (*prefix, index))


def set_at(record, path, value=None, delete=False):
    node = record
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value


@st.composite
def corruptions(draw, records):
    data = draw(st.sampled_from(records))
    lines = data.decode().splitlines()
    kind = draw(st.sampled_from(["delete", "swap", "edit", "drop", "duplicate", "reorder", "truncate"]))
    if kind == "truncate":
        return data, data[: draw(st.integers(0, len(data) - 1))]
    index = draw(st.integers(0, len(lines) - 1))
    if kind in ("drop", "duplicate", "reorder"):
        if kind == "drop":
            lines = lines[:index] + lines[index + 1 :]
        elif kind == "duplicate":
            lines = lines[: index + 1] + lines[index:]
        else:
            other = draw(st.integers(0, len(lines) - 1).filter(lambda j: lines[j] != lines[index]))
            lines[index], lines[other] = lines[other], lines[index]
        return data, ("\n".join(lines) + "\n").encode()
    record = json.loads(lines[index])
    paths = [p for p, _ in paths_in(record) if p and not (set(map(str, p)) & FREE_FIELDS)]
    path = draw(st.sampled_from(paths))
    node = record
    for part in path:
        node = node[part]
    if kind == "delete":
        set_at(record, path, delete=True)
    elif kind == "swap":
        value = draw(st.sampled_from(SWAPS).filter(lambda v: type(v) is not type(node)))
        set_at(record, path, value)
    else:
        if isinstance(node, bool):
            value = not node
        elif isinstance(node, int):
            value = node + draw(st.sampled_from([-7, -1, 1, 2, 50]))
        elif isinstance(node, str):
            mutations = st.sampled_from([node + "x", node[:-1], "yacht", "human", "agent", "ones", "table"])
            value = draw(mutations.filter(lambda v: v != node))
        elif isinstance(node, list):
            value = node[:-1] if node else [1]
        else:
            value = None
        set_at(record, path, value)
    lines[index] = json.dumps(record, separators=(",", ":"))
    return data, ("\n".join(lines) + "\n").encode()


def line_prefixes(data: bytes) -> list[list[dict]]:
    lines = [json.loads(line) for line in data.decode().splitlines()]
    return [lines[:n] for n in range(len(lines) + 1)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_every_corrupt_record_is_refused_in_one_line_or_is_what_a_crash_leaves(tmp_path_factory, real_records, data):
    """Random corruptions of real records: refused with one line naming the file, or (a torn last line,
    a cut at a line end) read as a prefix of the original, exactly what a crash could have left."""
    original, corrupt = data.draw(corruptions(real_records))
    path = tmp_path_factory.mktemp("fuzz") / "record.jsonl"
    path.write_bytes(corrupt)
    try:
        games = load_games(path)
    except RecordError as error:
        message = str(error)
        assert "\n" not in message and str(path) in message, message
        return
    read = [line for game in games.games for line in game.lines()]
    assert read in line_prefixes(original), "a corrupt record was accepted as a game that never happened"
    if corrupt != original:  # accepted changes are only crash-like cuts
        assert original.startswith(corrupt) or games.torn or len(read) < len(original.splitlines())


# -- what people see ---------------------------------------------------------------------------


def test_the_coach_stays_on_an_80x24_screen_and_never_cuts_an_option(tmp_path):
    """Defect 9: in 80x24 the verdict on a row choice scrolled off, and option lists wrapped mid-option."""
    console = ScriptedConsole(PLAN)
    assert play_main(["--seed", "11", "--coach", "--record", str(tmp_path / "g.jsonl")], console) == 0
    lines = "\n".join(console.output).split("\n")
    prompts = [i for i, line in enumerate(lines) if line.startswith("turn ") and line.endswith("> ")]
    assert len(prompts) == len(PLAN)
    for previous, prompt in zip(prompts, prompts[1:]):
        visible, rows = [], 0  # what 24 rows of 80 columns show when the prompt is reached
        for line in reversed(lines[: prompt + 1]):
            rows += max(1, -(-len(line) // 80))
            if rows > 24:
                break
            visible.append(line)
        verdicts = [line for line in lines[previous:prompt] if line.startswith("coach: ")]
        assert len(verdicts) == 1 and verdicts[0] in visible, "\n".join(reversed(visible))
    playing = lines[prompts[0] - 22 : prompts[-1]]
    assert max(len(line) for line in playing) <= 80, max(playing, key=len)
    item = re.compile(r"(keep [1-6](?: [1-6])*|re-roll all|score [A-Z][A-Za-z ]+ \(\d+\)) \d+\.\d\d")
    options = [line.split("options: ", 1)[1] for line in lines if "options: " in line]
    assert options and all(item.fullmatch(part) for line in options for part in line.split(" | ")), options


def test_a_record_never_makes_yacht_play_load_the_model_it_names(tmp_path, capsys):
    """Defect 1: a header naming ppo:/path/evil.zip made `yacht play --resume` load (unpickle) it."""
    from tests.agents.test_model_files import evil_zip

    marker = tmp_path / "marker"
    evil = evil_zip(tmp_path / "evil.zip", marker)
    data = table_game(tmp_path / "clean.jsonl", decisions=10).read_bytes()
    for policy in (f"ppo-zip:{evil}", f"ppo:{evil}"):
        path = tmp_path / "record.jsonl"
        path.write_bytes(edit_line(data, 0, lambda r: r["players"][1].__setitem__("policy", policy)))
        code, out = resume(path, capsys)
        assert code == 2 and "a record never makes yacht play load a model; name the agents again with --vs" in out.err
        assert f"names the agent {policy!r} for seat 2 (" in out.err  # the seat counted from 1, as the table shows it
        assert out.err.count("\n") == 1 and not marker.exists()
        code, out = analyze(path, capsys=capsys)  # analyze builds no policy for recorded agents either
        assert code == 0 and not marker.exists()
    # named again by the person (built-in agents here), the game goes on
    assert play_main(["--resume", str(path), "--vs", "greedy", "--vs", "optimal"], ScriptedConsole(PLAN[4:])) == 0
    assert read_records(path).games[0].finished and not marker.exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seed", "-1"], "argument --seed: expected an integer from 0"),
        (["--record", "/dev/null"], "--record '/dev/null' is not a regular file"),
        (["--vs", "random"] * 5, "a table seats at most 5 players (you and 4 agents), got 6"),
        (
            ["--resume", "game.jsonl", "--seed", "3"],
            "yacht play: error: --resume continues the recorded game as it was; it takes no --duplicate, --seed, --record "
            "or --name (only --vs, to name its agents again)\n",
        ),
        (
            ["--coach", "--target", "150", "--rules", "yahtzee"],
            "yacht play: error: --target works for rule sets without bonuses or jokers (yacht, yacht_exercism); yahtzee "
            "has them: play --coach without --target\n",
        ),
    ],
)
def test_play_options_are_checked_in_one_line(tmp_path, capsys, argv, message):
    """Defect 8: --seed -1 and --record /dev/null ended in tracebacks; six players were seated."""
    with pytest.raises(SystemExit) if argv[0] == "--seed" else _no_exit():
        code = play_main(argv, ScriptedConsole([]))
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_help_allows_as_many_agents_as_a_table_seats_beside_you(tmp_path, capsys):
    with pytest.raises(SystemExit):
        play_main(["--help"], ScriptedConsole([]))
    most = int(re.search(r"\(repeatable, up to (\d+)\)", " ".join(capsys.readouterr().out.split())).group(1))
    assert most == 4  # the refusal above: a table seats at most 5 players
    record = tmp_path / "full.jsonl"
    assert play_main(["--seed", "1", "--record", str(record), *["--vs", "random"] * most], ScriptedConsole(["q"])) == 0
    assert [p["name"] for p in read_records(record).games[0].header["players"]] == [
        "you",
        "random",
        *(f"random ({i})" for i in (2, 3, 4)),
    ]


def test_a_scored_row_s_line_names_the_bonuses_it_earned_beyond_its_points():
    from yacht_env.rules import YAHTZEE
    from yacht_play.terminal import bonus_text

    sixes, yahtzee = (YAHTZEE.dice.num_rerolls + YAHTZEE.category_index[row] for row in ("sixes", "yahtzee"))
    opened = list(YAHTZEE.category_names)
    row_only = {"action": sixes, "dice": [6, 6, 6, 1, 2], "open": opened, "points": 18}
    assert bonus_text(row_only, YAHTZEE) == ""
    assert bonus_text(row_only | {"points": 18 + 35}, YAHTZEE) == ", +35 upper bonus"
    five_sixes = {"action": sixes, "dice": [6] * 5, "open": ["sixes", "chance"], "points": 30 + 100}  # the Yahtzee box full
    assert bonus_text(five_sixes, YAHTZEE) == ", +100 Yahtzee bonus"
    assert bonus_text(five_sixes | {"points": 30 + 100 + 35}, YAHTZEE) == ", +100 Yahtzee bonus, +35 upper bonus"
    assert bonus_text({"action": yahtzee, "dice": [2] * 5, "open": opened, "points": 50}, YAHTZEE) == ""  # its row's 50


class _no_exit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_evaluate_seed_names_the_option():
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--seed", "-1", "--games", "4"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2 and "argument --seed: expected an integer 0 or more, got -1" in result.stderr


HOSTILE_NAME = "ann\x1b]0;owned\x07\x1b[2J\u202e\x00"  # retitles the terminal, clears it, reverses the text


def assert_escaped(out: str) -> None:
    assert "\x1b]" not in out and "\x07" not in out and "\x1b[2J" not in out and "\u202e" not in out and "\x00" not in out
    assert "ann\\x1b]0;owned\\x07\\x1b[2J\\u202e\\x00" in out.replace("\n", "")


@pytest.mark.parametrize("name", [HOSTILE_NAME, "cr\rname", "del\x7f", "c1\x9b", "bidi\u202etxt", "nul\x00"])
def test_a_record_whose_name_holds_a_control_character_is_refused_by_analyze_and_import(tmp_path, capsys, name):
    """As the browser's name field refuses it: the one check of :func:`yacht_env.safe_text.unsafe_character`."""
    from yacht_env.safe_text import unsafe_character

    path = tmp_path / "hostile.jsonl"
    path.write_bytes(table_game(tmp_path / "clean.jsonl").read_bytes().replace(b'"ann"', json.dumps(name).encode()))
    expected = (
        f"{path}:1: game record, field 'players.0.name': expected text without control characters "
        f"({unsafe_character(name)}), got {name!r}"
    )
    code, out = analyze(path, capsys=capsys)
    assert code == 2 and out.err == f"yacht analyze: error: {expected}\n"
    pytest.importorskip("sqlalchemy", reason="yacht import needs the serve extra")
    from yacht_play.cli import main

    assert main(["import", str(path), "--db", str(tmp_path / "yacht.db")]) == 2
    assert capsys.readouterr().err == f"yacht import: {expected}; nothing was imported\n"


def test_report_prints_a_name_s_control_characters_escaped(tmp_path, capsys):
    """A database from before names were checked may hold one: the report escapes it on the terminal."""
    pytest.importorskip("sqlalchemy", reason="yacht report needs the serve extra")
    from yacht_play import store
    from yacht_play.cli import main
    from yacht_play.serve.games import GameService

    engine = store.connect(str(tmp_path / "yacht.db"))
    game = read_records(table_game(tmp_path / "clean.jsonl")).games[0]
    renamed = json.loads(json.dumps(game.lines()).replace('"ann"', json.dumps(HOSTILE_NAME)))
    game = GameRecord(renamed[0], renamed[1:-1], renamed[-1])
    assert GameService(engine, []).import_game(game)
    capsys.readouterr()
    assert main(["report", "--db", str(tmp_path / "yacht.db"), "--include-imported"]) == 0  # an imported game
    assert_escaped(capsys.readouterr().out)


# -- the schema's bounds, each at its edge ---------------------------------------------------------

LONGEST_SEED = 2**63 - 1


def seats(count: int) -> list[dict]:
    """``count`` agent seats of a header, in seat order, each with its own seed."""
    return [{"seat": seat, "name": f"agent{seat}", "kind": "agent", "policy": "greedy", "seed": seat} for seat in range(count)]


BOUNDS = [  # (line, field path, lowest allowed, highest allowed, the value of that size)
    ("game", ("game_id",), 1, 64, "a".__mul__),
    ("game", ("time",), 0, 64, "t".__mul__),
    ("game", ("rules",), 0, 64, "r".__mul__),
    ("game", ("seed",), 0, LONGEST_SEED, int),
    ("game", ("players", 0, "name"), 1, 100, "n".__mul__),
    ("game", ("players", 0, "policy"), 0, 4096, "p".__mul__),
    ("game", ("players", 0, "seed"), 0, LONGEST_SEED, int),
    ("game", ("players",), 1, 5, seats),
    ("decision", ("seat",), 0, 4, int),
    ("decision", ("player",), 1, 100, "n".__mul__),
    ("decision", ("seed",), 0, LONGEST_SEED, int),
    ("decision", ("turn",), 1, 64, int),
    ("decision", ("roll",), 1, 16, int),
    ("decision", ("dice",), 1, 16, lambda n: [1] * n),
    ("decision", ("rolls_left",), 0, 16, int),
    ("decision", ("open",), 0, 64, lambda n: ["ones"] * n),
    ("decision", ("action",), 0, 2**20 - 1, int),
    ("decision", ("action_text",), 0, 200, "x".__mul__),
    ("decision", ("points",), 0, 10_000, int),
    ("decision", ("total",), 0, 100_000, int),
    ("end", ("totals",), 1, 5, lambda n: [0] * n),
    ("end", ("winners",), 1, 5, lambda n: ["ann"] * n),
]


def line_of_kind(data: bytes, kind: str) -> dict:
    return next(json.loads(line) for line in data.split(b"\n") if line and json.loads(line)["type"] == kind)


def with_value(record: dict, path: tuple, value) -> dict:
    record = json.loads(json.dumps(record))
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


@pytest.mark.parametrize("kind, path, low, high, make", BOUNDS, ids=[f"{b[0]}.{'.'.join(map(str, b[1]))}" for b in BOUNDS])
def test_every_bound_of_the_schema_holds_at_its_edge(real_records, kind, path, low, high, make):
    """The lowest and highest values a field may take pass the schema; one beyond either end is refused, naming it."""
    record = line_of_kind(real_records[1], kind)
    for value in (low, high):
        check_line(with_value(record, path, make(value)), "f:1")
    field = ".".join(map(str, path))
    for value in (low - 1, high + 1):
        if value < 0 and make is not int:
            continue
        # a number is told the bound it broke (">= 0"), a string or a list how long it may be
        expected = r"[<>]=? \d+, got -?\d+$" if make is int else r".*(at least|at most) \d+ (items?|characters?)"
        with pytest.raises(RecordError, match=f"f:1: {kind} record, field '{field}': expected {expected}"):
            check_line(with_value(record, path, make(value)), "f:1")


@pytest.mark.parametrize(
    "kind, path, allowed",
    [
        ("game", ("mode",), "'solitaire', 'table', 'duplicate' or 'evaluation'"),
        ("game", ("players", 0, "kind"), "'human' or 'agent'"),
        ("decision", ("kind",), "'human' or 'agent'"),
    ],
)
def test_a_name_outside_its_list_is_refused_naming_every_name_allowed(real_records, kind, path, allowed):
    """A mode or a player's kind the schema does not list: the one-line error names each value it would take."""
    record = with_value(line_of_kind(real_records[1], kind), path, "robot")
    with pytest.raises(RecordError) as error:
        check_line(record, "f:1")
    assert str(error.value) == f"f:1: {kind} record, field '{'.'.join(map(str, path))}': expected one of {allowed}, got 'robot'"


def test_a_file_that_cannot_be_opened_is_named_with_the_reason_alone(tmp_path):
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(RecordError) as error:
        read_records(missing)
    assert str(error.value) == f"cannot read {missing}: No such file or directory"


def test_a_whole_last_record_without_its_newline_is_kept_and_the_next_one_starts_a_line(tmp_path, real_records):
    """A crash between a record and its newline leaves the record whole: the next writer ends its line first."""
    path = tmp_path / "game.jsonl"
    intact = real_records[2]
    path.write_bytes(intact.rstrip(b"\n"))
    first = read_records(path)
    assert not first.torn and [g.lines() for g in first.games] == [g.lines() for g in read_records_of(tmp_path, intact).games]
    decision = next(json.loads(line) for line in intact.split(b"\n")[::-1] if line)
    with RecordWriter(path) as writer:
        writer.write(decision | {"seconds": 9.0})
    assert path.read_bytes() == intact + json.dumps(decision | {"seconds": 9.0}, separators=(",", ":")).encode() + b"\n"


def read_records_of(folder: Path, data: bytes):
    path = folder / "copy.jsonl"
    path.write_bytes(data)
    return read_records(path)


def test_a_torn_last_line_is_cut_off_by_the_next_writer_so_its_records_start_clean(tmp_path, real_records):
    """A crash mid-write leaves part of a line: opening a writer removes it, and the next record is a line of its own."""
    path = tmp_path / "game.jsonl"
    intact = real_records[2]
    path.write_bytes(intact + b'{"schema":2,"type":"deci')
    RecordWriter(path).close()
    assert path.read_bytes() == intact
    decision = next(json.loads(line) for line in intact.split(b"\n")[::-1] if line)
    path.write_bytes(intact + b'{"schema":2,"type":"deci')
    with RecordWriter(path) as writer:
        writer.write(decision | {"seconds": 9.0})
    assert path.read_bytes() == intact + json.dumps(decision | {"seconds": 9.0}, separators=(",", ":")).encode() + b"\n"
    assert not read_records(path).torn


def test_a_game_read_from_a_record_file_is_not_marked_imported_and_the_report_counts_it(tmp_path, real_records):
    """Only ``yacht import`` marks a game imported (in the database): a game read from its file, or made in the
    program, is not, so the report's default filters keep it."""
    from yacht_play.report.filters import Filters

    games = read_records_of(tmp_path, real_records[0]).games
    assert [game.imported for game in games] == [False, False]
    assert GameRecord(games[0].header).imported is False
    assert all(Filters().keep(game) for game in games)


def test_only_a_last_line_cut_short_is_a_tear_a_bad_line_before_it_is_corruption(tmp_path, real_records):
    path = tmp_path / "game.jsonl"
    intact = real_records[2]
    path.write_bytes(intact + b'{"schema":2,"type":"deci')
    assert read_records(path).torn and len(read_records(path).games[0].decisions) == 40
    path.write_bytes(intact.replace(b"\n", b"\nnot json\n", 1))
    with pytest.raises(RecordError, match=r"game.jsonl:2: not a JSON record$"):
        read_records(path)


def test_a_game_that_starts_before_the_one_before_it_ended_names_the_unfinished_game(tmp_path, real_records):
    """Two finished games, an unfinished third, then a fourth header: the error names the third, on the fourth's line."""
    finished, unfinished = real_records[0], real_records[2]
    unfinished_id = json.loads(unfinished.split(b"\n")[0])["game_id"]
    header = json.loads(real_records[1].split(b"\n")[0]) | {"game_id": "a-later-game"}
    data = finished + unfinished + json.dumps(header, separators=(",", ":")).encode() + b"\n"
    line = data.count(b"\n")
    with pytest.raises(RecordError) as error:
        read_records_of(tmp_path, data)
    assert str(error.value) == (
        f"{tmp_path / 'copy.jsonl'}:{line}: a new game starts, but game {unfinished_id} before it has no end record"
    )


def test_a_decision_after_its_game_ended_is_refused_on_its_line(tmp_path, real_records):
    """The last game's end record closes it: a decision written after it is corruption, not a move of that game."""
    lines = real_records[1].rstrip(b"\n").split(b"\n")
    decision = json.loads(lines[-2])
    data = b"\n".join(lines) + b"\n" + json.dumps(decision, separators=(",", ":")).encode() + b"\n"
    with pytest.raises(RecordError) as error:
        read_records_of(tmp_path, data)
    where = f"{tmp_path / 'copy.jsonl'}:{len(lines) + 1}"
    assert str(error.value) == f"{where}: decision record of game {decision['game_id']} after that game ended"


def test_blank_lines_between_records_are_skipped_and_the_records_after_them_kept(tmp_path, real_records):
    """A blank line is no record: every game of the file is read, the line numbers still count it."""
    intact = real_records[0] + real_records[1]
    spaced = intact.replace(b"\n", b"\n\n", 3)
    games = read_records_of(tmp_path, spaced).games
    expected = read_records_of(tmp_path, intact).games
    assert [game.lines() for game in games] == [game.lines() for game in expected] and len(games) == 3
    assert games[0].line_numbers[:3] == [1, 3, 5]


def test_a_record_writer_makes_the_folders_its_file_lies_in(tmp_path, real_records):
    path = tmp_path / "new" / "deeper" / "game.jsonl"
    with RecordWriter(path) as writer:
        writer.write(json.loads(real_records[0].split(b"\n")[0]))
    assert path.read_bytes() == real_records[0].split(b"\n")[0] + b"\n"


@pytest.mark.parametrize("length", [59, 60, 61, 200])
def test_a_bad_value_is_shown_whole_up_to_60_characters_and_cut_to_60_after(length):
    """The one-line error shows a wrong value's repr: whole up to 60 characters, else its first 60, '...' and its length."""
    value = "x" * length
    shown = repr(value) if length <= 60 else f"{value[:60]!r}... ({length} characters)"
    with pytest.raises(RecordError) as error:
        check_line({"schema": 2, "type": value}, "f:1")
    assert str(error.value).endswith(f"got {shown}")


def test_a_decision_s_seconds_may_be_zero_and_never_below(real_records):
    """Seconds are a float: zero is allowed, half a second below it is refused, naming the bound."""
    decision = line_of_kind(real_records[1], "decision")
    check_line(with_value(decision, ("seconds",), 0.0), "f:1")
    with pytest.raises(RecordError, match=r"^f:1: decision record, field 'seconds': expected >= 0, got -0\.5$"):
        check_line(with_value(decision, ("seconds",), -0.5), "f:1")


@pytest.mark.parametrize("sync", [True, False])
def test_a_record_writer_syncs_each_record_to_disk_only_when_asked(tmp_path, real_records, monkeypatch, sync):
    """``sync=True`` (a person's game) makes each record durable before the next move; agent games skip that."""
    import yacht_play.records as records

    synced = []
    monkeypatch.setattr(records.os, "fsync", lambda descriptor: synced.append(descriptor))
    lines = [json.loads(line) for line in real_records[0].split(b"\n")[:3]]
    with RecordWriter(tmp_path / "game.jsonl", sync=sync) as writer:
        for line in lines:
            writer.write(line)
        assert len(synced) == (len(lines) if sync else 0)
    assert len(synced) == (len(lines) if sync else 0) + 1  # closing syncs once more


@pytest.mark.parametrize("change", ["faces", "no seed"])
def test_a_schema_2_header_seat_needs_its_seed_and_no_dice_stream(real_records, change):
    """Schema 2 keeps each seat's seed in place of its dice stream ("faces", schema 1): either is refused."""
    header = line_of_kind(real_records[1], "game")
    assert header["schema"] == 2
    player = header["players"][1]
    if change == "faces":
        player["faces"] = [[[1, 2, 3, 4, 5]]]
    else:
        player["seed"] = None
    with pytest.raises(RecordError, match=r"^f:1: game record, field 'players\.1': expected a seed and no faces \(schema 2\)$"):
        check_line(header, "f:1")


def test_a_header_seat_below_zero_is_refused_by_its_bound(real_records):
    """A negative seat breaks the schema's bound, named as such, before the seats' order is looked at."""
    header = line_of_kind(real_records[1], "game")
    header["players"][0]["seat"] = -1
    with pytest.raises(RecordError, match=r"^f:1: game record, field 'players\.0\.seat': expected >= 0, got -1$"):
        check_line(header, "f:1")


@pytest.mark.parametrize(
    "path, value, expected",
    [
        (("game_id",), "", "at least 1 character"),
        (("game_id",), "g" * 65, "at most 64 characters"),
        (("players",), [], "at least 1 item"),
        (("players", 0, "name"), "", "at least 1 character"),
    ],
)
def test_a_length_out_of_bounds_is_refused_saying_the_bound_once(real_records, path, value, expected):
    """The one-line error gives the allowed length in its own words, never pydantic's sentence around it."""
    record = with_value(line_of_kind(real_records[1], "game"), path, value)
    with pytest.raises(RecordError) as error:
        check_line(record, "f:1")
    assert str(error.value).startswith(f"f:1: game record, field '{'.'.join(map(str, path))}': expected {expected}, got ")


GAME_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # what a game id may be: it names files and links, and is printed as it is


@pytest.fixture(scope="module")
def table_header(real_records) -> dict:
    return line_of_kind(real_records[1], "game")


@given(st.text(alphabet=st.sampled_from("aZ09_.-/ \x1b\n\\é"), min_size=1, max_size=8))
def test_a_game_id_is_taken_whole_from_its_characters_or_refused_with_it_escaped(table_header, game_id):
    """Every character of an id is one allowed, from the first to the last (a path's ``/``, a space, ESC, a newline
    anywhere refuse it); the refusal shows the id escaped, one line without a control character."""
    header = with_value(table_header, ("game_id",), game_id)
    if GAME_ID.fullmatch(game_id):
        check_line(header, "f:1")
        return
    with pytest.raises(RecordError) as error:
        check_line(header, "f:1")
    message = str(error.value)
    assert message.startswith("f:1: game record, field 'game_id': ") and message.endswith(f"got {game_id!r}")
    assert message.isprintable()


def test_analyze_replays_an_agent_on_the_dice_of_agent_games_and_plots_each_player_side_by_side(tmp_path, capsys, monkeypatch):
    import yacht_env.figures

    write_agent_games(tmp_path / "optimal.jsonl", "optimal", games=2, seed=3)  # no person played: every stream counts
    figures = []
    monkeypatch.setattr(yacht_env.figures, "save_png", lambda path, figure, dpi: figures.append(figure))
    grades = tmp_path / "grades.json"
    code, out = analyze(
        tmp_path / "optimal.jsonl", "--agent", "greedy", "--plot", str(tmp_path / "p.png"), "--json", str(grades), capsys=capsys
    )
    assert code == 0, out.err
    document = json.loads(grades.read_text())
    assert document["schema"] == 1 and [p["label"] for p in document["players"]] == ["optimal", "greedy (replay)"]
    assert re.findall(r"turn (\d+): loss/decision", out.out) == [str(turn) for turn in range(1, 13)]  # a row a turn
    assert "optimal: no decision lost anything" in out.out  # and then the next player's worst decisions
    assert re.search(r"greedy.*: worst \d+ decisions", out.out)
    assert re.search(r"loss per decision +│ +0\.000 │ +\d\.\d{3} │", out.out)  # three decimals
    assert re.search(r"loss per game +│ +0\.00 │ +\d+\.\d{2} │", out.out)  # points a game: two
    (figure,) = figures
    assert tuple(figure.get_size_inches()) == (12, 4.5)  # two panels side by side, the turns' three times as wide
    by_turn, by_kind = figure.axes
    assert {round(bar.get_width(), 9) for axes in (by_turn, by_kind) for bar in axes.patches} == {0.4}  # two players
    for axes, places in ((by_turn, range(1, 13)), (by_kind, range(3))):  # each place's two bars centred on it
        centres = [round(bar.get_x() + bar.get_width() / 2, 9) for bar in axes.patches]  # the first player's, then the next's
        assert centres == [round(place + side, 9) for side in (-0.2, 0.2) for place in places]
    assert list(by_turn.get_xticks()) == list(range(1, 13))  # a tick per turn
    assert [text.get_text() for text in by_turn.get_legend().get_texts()] == ["optimal", "greedy (replay)"]
    assert by_kind.get_position().width > 0.15 and by_turn.get_position().width > 2 * by_kind.get_position().width


def test_a_plot_of_no_player_is_drawn_with_its_panels_and_no_bar_or_legend(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    import yacht_env.figures
    from yacht_play.analyze import save_plot

    figures, save_png = [], yacht_env.figures.save_png
    monkeypatch.setattr(
        yacht_env.figures, "save_png", lambda path, figure, dpi: figures.append(figure) or save_png(path, figure, dpi)
    )
    save_plot(tmp_path / "empty.png", [])
    assert plt.imread(tmp_path / "empty.png").shape[:2] == (495, 1320)  # 12 x 4.5 inches at 110 dpi
    assert [(axes.get_title(), len(axes.patches), axes.get_legend()) for axes in figures[0].axes] == [
        ("Loss per decision, by turn", 0, None),
        ("By decision type", 0, None),
    ]


def test_analyze_refuses_records_of_two_rule_sets_in_one_line_whichever_comes_first(tmp_path, capsys):
    from yacht_env.rules import RULE_SETS

    write_agent_games(tmp_path / "yacht.jsonl", "greedy", games=1, seed=3)
    write_agent_games(tmp_path / "yahtzee.jsonl", "greedy", games=1, seed=3, rules=RULE_SETS["yahtzee"])
    for files in (["yacht.jsonl", "yahtzee.jsonl"], ["yahtzee.jsonl", "yacht.jsonl"]):
        capsys.readouterr()
        code = analyze_main([str(tmp_path / name) for name in files])
        err = capsys.readouterr().err
        assert code != 0 and "grade one rule set at a time (--rules NAME)" in err and err.count("\n") == 1
        first, other = (name.removesuffix(".jsonl") for name in files)  # the first game read is named first
        assert re.search(rf"game \S+ was played under the {first} rules and game \S+ under {other}: ", err), err


def test_agents_are_replayed_on_the_streams_people_played_not_on_those_agents_played_alone(tmp_path):
    from yacht_env.rules import YACHT
    from yacht_play.analyze import recorded_streams

    write_agent_games(tmp_path / "agents.jsonl", "greedy", games=1, seed=3)
    games = [*read_records(table_game(tmp_path / "table.jsonl")).games, *read_records(tmp_path / "agents.jsonl").games]
    assert [seed for seed, _ in recorded_streams(games, YACHT)] == [40]  # ann's (the table's agents shared her dice)


def test_a_table_of_worst_decisions_aligns_its_words_left_and_its_figures_right():
    """Words (the game, the dice, the two choices) start at their column's left edge, figures (turn, roll, the
    comparison, the loss) end at its right edge, so a column of numbers reads digit under digit."""
    from rich.console import Console

    from yacht_play.analyze import decisions_table

    entry = {"game_id": "g", "turn": 3, "roll": 2, "dice": [1, 1, 2, 5, 6], "chosen": "x", "best": "y"}
    table = decisions_table("worst", ("best choice", "expected final", "lost points"), [entry], lambda e: ("1", "2"), str)
    console = Console(width=200, record=True, color_system=None)
    console.print(table)
    (row,) = [line for line in console.export_text().splitlines() if "1 1 2 5 6" in line]
    cells = row.split("│")[1:-1]
    words = {0: "g", 3: "1 1 2 5 6", 4: "x", 5: "y"}
    figures = {1: "3", 2: "2", 6: "1", 7: "2"}
    assert all(cells[index].startswith(f" {text} ") for index, text in words.items()), cells
    assert all(cells[index].endswith(f" {text} ") and cells[index].strip() == text for index, text in figures.items()), cells
    assert all(len(cells[index].strip()) < len(cells[index]) - 2 for index in (0, 1, 2, 4, 5, 6, 7)), cells  # room to align
