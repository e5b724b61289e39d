"""The checkpoints of a stable-baselines3 run (checkpoints/step_<N>.zip): names refused before a run starts or resumes,
the one a resume continues from, and how it is read."""

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.learned.model_files import ModelLoadError
from agents.training.checkpoints import check_checkpoint_names, checkpoint_count, latest_checkpoint, load_sb3_checkpoint
from agents.training.config import ConfigError

ADVICE = "is not named step_<N>.zip with N its steps: rename it, or move it out of checkpoints/"


def run_with(run_dir: Path, *names: str) -> Path:
    (run_dir / "checkpoints").mkdir(parents=True)
    for name in names:
        (run_dir / "checkpoints" / name).write_bytes(b"PK")
    return run_dir


@pytest.mark.parametrize("bad", ["step_abc.zip", "step_.zip", "step_1_2.zip", "step_-5.zip", "step_1234567890123456.zip"])
def test_a_checkpoint_name_without_a_step_count_is_refused_in_one_line(tmp_path, bad):
    run = run_with(tmp_path / "run", "step_512.zip", bad)
    for read in (check_checkpoint_names, latest_checkpoint):  # a resume by any caller (a sweep trial's too) is guarded
        with pytest.raises(ConfigError) as error:
            read(run)
        assert str(error.value) == f"checkpoint {str(run / 'checkpoints' / bad)!r} {ADVICE}"


def test_checkpoints_named_by_their_steps_pass(tmp_path):
    run = run_with(tmp_path / "run", "step_0.zip", "step_512.zip", "step_999999999999999.zip", "replay.npz", "step_7.zip.part")
    check_checkpoint_names(run)  # nothing raised
    check_checkpoint_names(tmp_path / "new")  # a run not started yet has no checkpoints folder


def test_a_long_checkpoint_path_is_shown_cut_to_300_characters_with_its_length(tmp_path):
    run = run_with(tmp_path / ("r" * 250), "step_x.zip")
    path = str(run / "checkpoints" / "step_x.zip")
    assert len(path) > 301
    with pytest.raises(ConfigError) as error:
        check_checkpoint_names(run)
    assert str(error.value) == f"checkpoint {path[:300]!r}... ({len(path):,} characters) {ADVICE}"


def test_a_resume_continues_from_the_checkpoint_of_most_steps_by_number_not_by_name(tmp_path):
    run = run_with(tmp_path / "run", "step_999.zip", "step_1000.zip", "step_64.zip")
    assert latest_checkpoint(run) == run / "checkpoints" / "step_1000.zip"
    assert latest_checkpoint(run_with(tmp_path / "empty")) is None


def test_a_planning_run_reads_its_own_checkpoints_counted_in_games(tmp_path):
    from agents.training import plan_train

    run = run_with(tmp_path / "run", "step_90.safetensors", "step_100.safetensors", "step_5000.zip", "step_x.zip")
    assert plan_train.latest_checkpoint(run) == run / "checkpoints" / "step_100.safetensors"  # its own files only
    (run / "checkpoints" / "step_1_0.safetensors").write_bytes(b"")
    with pytest.raises(ConfigError) as error:
        plan_train.latest_checkpoint(run)
    path = run / "checkpoints" / "step_1_0.safetensors"
    assert str(error.value) == (
        f"checkpoint {str(path)!r} is not named step_<N>.safetensors with N its games: rename it, or move it out of checkpoints/"
    )


@pytest.mark.parametrize(
    "name, count", [("step_0.zip", 0), ("step_12.zip", 12), ("step_999999999999999.safetensors", 10**15 - 1)]
)
def test_a_checkpoints_count_is_the_number_in_its_name(name, count):
    assert checkpoint_count(Path("run") / "checkpoints" / name) == count


@pytest.mark.parametrize("bad", ["step_1_2.zip", "step_.zip", "steps_3.zip", "step_3x.safetensors"])
def test_a_name_without_a_count_is_never_read_as_one(bad):
    with pytest.raises(ConfigError, match=r"is not named step_<N>\."):
        checkpoint_count(Path(bad))
    long = Path("r" * 400) / bad
    with pytest.raises(ConfigError) as error:
        checkpoint_count(long)
    assert (
        str(error.value)
        == f"checkpoint {str(long)[:300]!r}... ({len(str(long)):,} characters) is not named step_<N>{long.suffix}"
    )


def algorithm(load) -> SimpleNamespace:
    """An algorithm class as the checkpoint's reader sees it: its ``load``."""
    return SimpleNamespace(load=load)


def read(checkpoint: Path, load) -> object:
    return load_sb3_checkpoint(algorithm(load), checkpoint, "the env", Path("runs/r"), 0.001)


def test_a_checkpoint_is_read_by_its_algorithm_onto_the_env_on_the_cpu_with_the_config_s_learning_rate(tmp_path):
    checkpoint = tmp_path / "step_100.zip"
    checkpoint.write_bytes(b"PK\x03\x04")
    calls = []
    assert read(checkpoint, lambda path, **options: calls.append((path, options)) or "the model") == "the model"
    options = {
        "env": "the env",
        "device": "cpu",
        "tensorboard_log": str(Path("runs/r/tb")),
        "custom_objects": {"learning_rate": 0.001, "lr_schedule": None},  # the schedule rebuilt, not unpickled
    }
    assert calls == [(checkpoint, options)]


def refuse(path: Path, **options):
    raise AssertionError(f"{path} was opened")


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda path: path.mkdir(), "is not a regular file (a folder): give a file"),
        (lambda path: None, "No such file or directory"),
        # sparse: a size past the bound of 4 GiB without the bytes
        (
            lambda path: os.truncate(path.touch() or path, 4 * 2**30 + 1),
            "is 4,294,967,297 bytes, more than the 4,294,967,296 allowed",
        ),
    ],
    ids=["a folder", "no file", "over 4 GiB"],
)
def test_a_checkpoint_that_is_no_file_or_too_large_is_refused_in_one_line_before_it_is_opened(tmp_path, make, said):
    checkpoint = tmp_path / "step_100.zip"
    make(checkpoint)
    with pytest.raises(ModelLoadError) as refused:
        read(checkpoint, refuse)
    assert str(refused.value).startswith(f"checkpoint {str(checkpoint)!r} cannot be resumed: ")
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_checkpoint_of_4_gib_is_not_refused_for_its_size(tmp_path):
    checkpoint = tmp_path / "step_100.zip"
    checkpoint.touch()
    os.truncate(checkpoint, 4 * 2**30)  # sparse
    assert read(checkpoint, lambda path, **options: "read") == "read"


@pytest.mark.parametrize("message, said", [("no policy\n  while reading policy.pth\n", "no policy"), ("", "ValueError")])
def test_a_loader_s_error_is_told_by_its_first_line_or_its_type(tmp_path, message, said):
    checkpoint = tmp_path / "step_100.zip"
    checkpoint.write_bytes(b"PK\x03\x04 cut short")

    def fails(path, **options):
        raise ValueError(message)

    with pytest.raises(ModelLoadError) as refused:
        read(checkpoint, fails)
    assert str(refused.value) == f"checkpoint {str(checkpoint)!r} cannot be resumed: {said}"
