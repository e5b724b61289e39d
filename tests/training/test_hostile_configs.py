"""Hostile configs and run folders: bounded YAML, bounded values, short messages, no pickle from a config file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.training.config import MAX_YAML_DEPTH, ConfigError, load_config, parse_yaml
from tests.training.test_train import TINY

ROOT = Path(__file__).resolve().parents[2]


def train_py(*args, cwd=ROOT):
    """train.py in a subprocess (a crash or an abort shows here, not in the test process; a hang, such as an alias
    bomb expanded, fails at the timeout)."""
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def alias_bomb(key: str) -> str:
    """A "billion laughs": ten levels of nine aliases each, 9^9 strings once expanded, under ``key``."""
    lines = ["anchors:", '  - &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        lines.append(f"  - &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\n{key}: *l9\n"


HOSTILE = {
    "bomb_seed": (alias_bomb("seed"), "expands to more than 100,000 values"),
    "bomb_name": (alias_bomb("name"), "expands to more than 100,000 values"),
    "long_name": ("name: " + "n" * 300 + "\n", "a run name is at most 100 characters, got 300"),
    "digits": ("seed: " + "7" * 5000 + "\n", "an integer of 5,000 digits (at most 30)"),
    "net_arch": ("ppo: {net_arch: [1000000000]}\n", "layer widths must be at most 65,536, got [1000000000]"),
    "n_steps": ("ppo: {n_steps: 1e11}\n", "ppo.n_steps: Input should be less than or equal to 1000000"),
    "torch_threads": ("run: {torch_threads: 1e9}\n", "run.torch_threads: Input should be less than or equal to 1024"),
    "deep": ("seed: " + "[" * 100_000 + "\n", "nested more than 50 levels deep"),
    "huge": ("# padding\n" * 200_000, "larger than 1,000,000 bytes"),
    "long_value": ("env: {rules: " + "y" * 5000 + "}\n", "unknown rule set 'yyyyyyyy"),
    "self_alias": ("ppo: {net_arch: &widths [*widths]}\n", "ppo.net_arch.0: Input should be a valid integer (got [[...]])"),
    "tag_int": ("seed: !!int abc\n", "is not valid YAML: invalid literal for int() with base 10: 'abc'"),
}


# train.py's main for each argument list in turn, in one interpreter apart from the tests (the start-up, torch's import
# most of it, is paid once), each run's end handled as the interpreter handles a script's: a SystemExit's message
# to stderr and status 1, any other exception a traceback and status 1.
MAIN_IN_TURN = """
import contextlib, io, json, sys, traceback
sys.path.insert(0, sys.argv[1])
import train
results = []
for argv in json.loads(sys.argv[2]):
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            train.main(argv)
        status = 0
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
        if isinstance(exit.code, str):
            stderr.write(exit.code + chr(10))
    except BaseException:
        status = 1
        stderr.write(traceback.format_exc())
    results.append([status, stderr.getvalue()])
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory):
    """Each hostile config's ``(status, stderr, whether a runs folder was made)``, from one interpreter (a crash or an
    abort shows here, not in the test process; a hang, such as an alias bomb expanded, fails at the timeout)."""
    folder = tmp_path_factory.mktemp("hostile")
    runs = {}
    for case, (content, _) in HOSTILE.items():
        (folder / f"{case}.yaml").write_text(content)
        runs[case] = ["--config", str(folder / f"{case}.yaml"), "--runs-dir", str(folder / f"runs_{case}")]
    done = subprocess.run(
        [sys.executable, "-c", MAIN_IN_TURN, str(ROOT), json.dumps(list(runs.values()))],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.splitlines()[-1])
    return {case: (*result, (folder / f"runs_{case}").exists()) for case, result in zip(runs, results)}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_configs_are_refused_in_one_short_line(hostile_runs, case):
    status, stderr, made_runs = hostile_runs[case]
    message = HOSTILE[case][1]
    assert status == 1 and "Traceback" not in stderr, stderr[-2000:]
    line = stderr.strip()
    assert "\n" not in line and message in line and len(line) < 500, line[:1000]  # a value shown twice, 60 characters each
    assert not made_runs


def test_a_hostile_config_is_one_line_from_the_command_itself(tmp_path):
    """The refusal as a person sees it: train.py run as a program, its status and all it writes."""
    path = tmp_path / "bomb.yaml"
    path.write_text(HOSTILE["bomb_seed"][0])
    result = train_py("--config", str(path), "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and HOSTILE["bomb_seed"][1] in result.stderr, result.stderr[-2000:]
    assert not (tmp_path / "runs").exists()


def test_echoed_values_are_cut_short():
    with pytest.raises(ConfigError) as error:
        load_config(ROOT / "configs/quick.yaml", ["ppo.n_steps=" + "x" * 10_000])
    assert "ppo.n_steps" in str(error.value) and "... (10,000 characters)" in str(error.value) and len(str(error.value)) < 400


def test_shipped_configs_still_load_with_their_numbers():
    config = load_config(ROOT / "configs/quick.yaml", ["ppo.learning_rate=1e-4", "ppo.n_steps=128"])
    assert config.ppo.learning_rate == 1e-4 and config.ppo.n_steps == 128


def override_refusal(override: str) -> str:
    """The one line a config with ``override`` is refused in."""
    with pytest.raises(ConfigError) as error:
        load_config(None, [override])
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.learning_rate=١e-4", "ppo.learning_rate: expected a number or a schedule"),
        ("ppo.learning_rate={start: ١e-3, end: 0}", "ppo.learning_rate.start: expected a number in digits 0-9"),
        ("ppo.ent_coef='٠.٠١'", "ppo.ent_coef: expected a number or a schedule"),
        ("env.reward_scale='١'", "env.reward_scale: expected a number in digits 0-9"),
        ("ppo.n_steps=' 256 '", "ppo.n_steps: expected an integer in digits 0-9"),
        ("seed='٧'", "seed: expected an integer in digits 0-9"),
        ("plan.learning_rate='1e-3 '", "plan.learning_rate: expected a number in digits 0-9"),
    ],
)
def test_a_number_in_another_script_s_digits_or_with_spaces_is_refused_naming_the_key(override, message):
    assert message in override_refusal(override)  # float() and pydantic's lax parsing read ١e-4 as 0.0001


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("seed=!!int abc", "override 'seed=!!int abc': value is not valid YAML (invalid literal for int() with base 10: 'abc')"),
        ("seed=!!timestamp 2020-13-01", "'seed=!!timestamp 2020-13-01': value is not valid YAML (month must be in 1..12)"),
        ("ppo.net_arch=&widths [*widths]", "ppo.net_arch.0: Input should be a valid integer (got [[...]])"),
    ],
)
def test_an_override_with_a_tag_it_cannot_convert_or_a_list_holding_itself_is_one_line(override, message):
    assert message in override_refusal(override)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("env.vectorized=maybe", "env.vectorized: Input should be a valid boolean, unable to interpret input (got 'maybe')"),
        ("run.progress_bar=2", "run.progress_bar: Input should be a valid boolean, unable to interpret input (got 2)"),
        ("env.typo=1", "unknown key 'env.typo'"),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_by_its_key_and_only_an_unknown_key_as_unknown(override, message):
    assert override_refusal(override) == f"invalid config (defaults): override {override!r}: {message}"


def test_a_number_in_quotes_in_ascii_forms_is_read_as_before():
    config = load_config(None, ["ppo.learning_rate='1e-4'", "env.reward_scale='0.5'", "seed='7'", "ppo.ent_coef='-0'"])
    assert (config.ppo.learning_rate, config.env.reward_scale, config.seed, config.ppo.ent_coef) == (1e-4, 0.5, 7, 0.0)


def make_resumable(tmp_path) -> Path:
    """A run folder with a config and a checkpoint, as a kill leaves it."""
    from agents.training.config import dump_config

    run = tmp_path / "cut"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text(dump_config(load_config(ROOT / "configs/quick.yaml", TINY)))
    return run


@pytest.mark.parametrize(
    "checkpoint, curve, message",
    [
        ("step_abc.zip", None, "step_abc.zip' is not named step_<N>.zip"),
        ("step_512.zip", "", "does not start with the header steps,wall_seconds"),
        ("step_512.zip", "steps,wall_seconds,mean_score\nabc,1.0,3\n", "line 2 is 'abc,1.0,3'"),
        ("step_512.zip", b"\xff\xfe\x00garbage", "learning_curve.csv' cannot be continued"),
    ],
)
def test_a_resume_with_a_bad_checkpoint_name_or_curve_is_one_line(tmp_path, checkpoint, curve, message):
    run = make_resumable(tmp_path)
    (run / "checkpoints" / checkpoint).write_bytes((ROOT / "models/ppo.zip").read_bytes())
    if curve is not None:
        (run / "learning_curve.csv").write_bytes(curve if isinstance(curve, bytes) else curve.encode())
    before = sorted(p.name for p in run.rglob("*"))
    result = train_py("--resume", str(run))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert message in result.stderr and "\n" not in result.stderr.strip(), result.stderr
    assert sorted(p.name for p in run.rglob("*")) == before  # nothing written, nothing removed


# -- pickles named in a config file ----------------------------------------------------------------


@pytest.mark.parametrize(
    "content, field",
    [
        ("ppo: {init_from: MODEL}\n", "ppo.init_from"),
        ("env: {num_players: 2, opponents: ['ppo-zip:MODEL']}\nrun: {eval_games: 20, final_eval_games: 20}\n", "env.opponents"),
    ],
)
def test_a_config_naming_a_pickle_is_refused_without_trust_pickles(tmp_path, content, field):
    path = tmp_path / "sent.yaml"
    path.write_text(content.replace("MODEL", str(ROOT / "models/ppo.zip")))
    result = train_py("--config", str(path), "--runs-dir", str(tmp_path / "runs"), *TINY)
    line = result.stderr.strip()
    assert result.returncode == 1 and "\n" not in line and field in line and "--trust-pickles" in line, line
    assert not (tmp_path / "runs").exists()


def test_trust_pickles_lets_a_config_name_a_zip_and_an_override_needs_no_flag(tmp_path):
    path = tmp_path / "sent.yaml"
    path.write_text(f"ppo: {{init_from: {ROOT / 'models/ppo.zip'}}}\n")
    # with the flag the zip is loaded (and found not to fit this run's network): past the pickle check
    result = train_py("--config", str(path), "--runs-dir", str(tmp_path / "runs"), "--trust-pickles", *TINY, "ppo.policy=mlp")
    assert "--trust-pickles" not in result.stderr and "ppo.init_from" in result.stderr and "Traceback" not in result.stderr
    result = train_py(
        "--config", str(ROOT / "configs/quick.yaml"), "--runs-dir", str(tmp_path / "runs"), *TINY, "ppo.policy=mlp",
        f"ppo.init_from={ROOT / 'models/ppo.zip'}",
    )  # fmt: skip
    assert "--trust-pickles" not in result.stderr and "ppo.init_from" in result.stderr
    assert "--trust-pickles" in train_py("--help").stdout


# -- the rule set in every title ------------------------------------------------------------------


def test_train_py_titles_and_eval_json_name_the_rules_played(tmp_path):
    result = train_py("--config", "configs/yahtzee_quick.yaml", "--runs-dir", str(tmp_path), "name=y", *TINY, "ppo.policy=mlp")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "yahtzee: 20 games" in result.stdout and "yacht:" not in result.stdout, result.stdout[-3000:]
    assert json.loads((tmp_path / "y" / "eval.json").read_text())["rules"] == "yahtzee"


def test_yaml_may_nest_exactly_its_bound_of_levels_and_no_more():
    """The bound counts the document's own node: ``MAX_YAML_DEPTH`` nested lists are read, one more is refused."""
    data = parse_yaml("[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH)
    for _ in range(MAX_YAML_DEPTH - 1):
        (data,) = data
    assert data == []
    with pytest.raises(yaml.YAMLError, match=f"nested more than {MAX_YAML_DEPTH} levels deep"):
        parse_yaml("[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1))
