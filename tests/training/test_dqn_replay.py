"""The replay buffer saved beside a DQN checkpoint (checkpoints/replay.npz): what loads back, and what is refused in one
line before it reaches the buffer."""

import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import example, given, settings
from hypothesis import strategies as st
from stable_baselines3.common.buffers import DictReplayBuffer

from agents.learned.model_files import ModelLoadError
from agents.training import dqn_replay
from agents.training.config import MAX_BUFFER
from agents.training.dqn_env import MASK, OBSERVATION
from agents.training.dqn_replay import MAX_REPLAY_BYTES, REPLAY_NAME, buffer_arrays, load_replay, save_replay
from yacht_env.actions import ActionLayout
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.rules import RULE_SETS

N_ENVS, ROWS, WIDTH, ACTIONS = 2, 4, 5, 3  # a buffer of 8 transitions: 4 rows of 2 envs


def space(width: int = WIDTH, actions: int = ACTIONS) -> spaces.Dict:
    box = spaces.Box(-1.0, 1.0, (width,), np.float32)
    return spaces.Dict({OBSERVATION: box, MASK: spaces.MultiBinary(actions)})


def new_buffer() -> DictReplayBuffer:
    return DictReplayBuffer(ROWS * N_ENVS, space(), spaces.Discrete(ACTIONS), device="cpu", n_envs=N_ENVS)


def add_transitions(buffer: DictReplayBuffer, count: int, seed: int = 0) -> None:
    """``count`` rows of transitions (each of the N_ENVS envs), every value drawn so that no two rows are alike."""
    rng = np.random.default_rng(seed)
    for _ in range(count):

        def observation():
            masks = rng.integers(0, 2, (N_ENVS, ACTIONS), dtype=np.int8)
            return {OBSERVATION: rng.uniform(-1, 1, (N_ENVS, WIDTH)).astype(np.float32), MASK: masks}

        dones = rng.integers(0, 2, N_ENVS).astype(np.float32)
        infos = [{"TimeLimit.truncated": bool(rng.integers(0, 2))} for _ in range(N_ENVS)]
        buffer.add(observation(), observation(), rng.integers(0, ACTIONS, N_ENVS), rng.normal(size=N_ENVS), dones, infos)


def saved_buffer(folder: Path, count: int = 3, steps: int = 100) -> DictReplayBuffer:
    buffer = new_buffer()
    add_transitions(buffer, count)
    save_replay(buffer, folder, steps)
    return buffer


def read_arrays(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / REPLAY_NAME) as saved:
        return {name: saved[name] for name in saved.files}


def rewrite(folder: Path, arrays: dict[str, np.ndarray]) -> None:
    with (folder / REPLAY_NAME).open("wb") as handle:
        np.savez(handle, **arrays)


def where(folder: Path) -> str:
    return f"replay buffer {str(folder / REPLAY_NAME)!r}"


def assert_untouched(buffer: DictReplayBuffer) -> None:
    """A file left unread leaves the new run's buffer as it was made: empty, at row 0."""
    assert buffer.pos == 0 and not buffer.full
    assert all(not array.any() for array in buffer_arrays(buffer).values())


def refusal(folder: Path) -> str:
    buffer = new_buffer()
    with pytest.raises(ModelLoadError) as error:
        load_replay(buffer, folder, 100)
    assert buffer.pos == 0 and not buffer.full  # the run stops here: its buffer is never used
    message = str(error.value)
    assert "\n" not in message
    return message


# -- what loads back ---------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(count=st.integers(0, 3 * ROWS), steps=st.integers(0, 10**12), seed=st.integers(0, 2**16))
@example(count=0, steps=0, seed=0)  # nothing written yet, at step 0
@example(count=ROWS, steps=1, seed=1)  # just full: the next write goes to row 0 again
def test_a_saved_buffer_loads_back_as_it_was_whatever_its_fill(count, steps, seed):
    # 0 rows, a part, exactly full (the write position back at row 0) and wrapped more than once all come back
    original = new_buffer()
    add_transitions(original, count, seed)
    with tempfile.TemporaryDirectory() as folder:
        save_replay(original, Path(folder), steps)
        restored = new_buffer()
        assert load_replay(restored, Path(folder), steps) is True
    assert (restored.pos, restored.full) == (count % ROWS, count >= ROWS)
    for name, array in buffer_arrays(original).items():
        np.testing.assert_array_equal(buffer_arrays(restored)[name], array, err_msg=name)


def test_a_checkpoint_without_a_saved_buffer_continues_with_an_empty_one(tmp_path):
    buffer = new_buffer()
    assert load_replay(buffer, tmp_path, 100) is False
    assert_untouched(buffer)


@pytest.mark.parametrize("saved_at", [99, 101, 0])
def test_a_buffer_saved_at_another_step_count_is_left_unread(tmp_path, saved_at):
    # a kill between the buffer's write and the checkpoint's leaves a buffer of a later or an earlier checkpoint
    saved_buffer(tmp_path, steps=saved_at)
    buffer = new_buffer()
    assert load_replay(buffer, tmp_path, 100) is False
    assert_untouched(buffer)


def test_the_largest_buffer_a_config_allows_is_within_the_size_bound():
    # dqn.buffer_size up to MAX_BUFFER transitions, of the widest Box observation of any rule set (the mask one byte
    # an action, the action int64, reward, done and timeout float32 as stable-baselines3 stores them)
    widest = 0
    for rules in RULE_SETS.values():
        actions = ActionLayout(rules).num_actions
        for encoding in ENCODINGS:
            observation = make_encoding(encoding, rules).space
            if isinstance(observation, spaces.Box):
                width = int(np.prod(observation.shape)) * observation.dtype.itemsize
                widest = max(widest, 2 * (width + actions) + 8 + 3 * 4)
    # each of the file's 8 arrays and 3 scalars adds a zip entry and a .npy header, far under a kilobyte each
    assert MAX_BUFFER * widest + 11 * 1024 <= MAX_REPLAY_BYTES


def test_the_bytes_per_transition_are_those_the_size_bound_counts():
    buffer = DictReplayBuffer(1, space(63, 44), spaces.Discrete(44), device="cpu", n_envs=1)
    assert sum(array[0].nbytes for array in buffer_arrays(buffer).values()) == 2 * (63 * 4 + 44) + 8 + 3 * 4


# -- files that are not a replay buffer --------------------------------------------------------------------------------


DIRECTORY_ENTRY = b"PK\x01\x02"  # the central directory's record of a member, which zipfile reads it by


def cut(data: bytearray) -> bytearray:
    return data[: len(data) // 2]


def compression_unknown(data: bytearray) -> bytearray:
    struct.pack_into("<H", data, data.index(DIRECTORY_ENTRY) + 10, 99)  # a method zipfile cannot read
    return data


def encrypted(data: bytearray) -> bytearray:
    struct.pack_into("<H", data, data.index(DIRECTORY_ENTRY) + 8, 1)  # general purpose flag bit 0
    return data


def directory_offset_past_its_place(data: bytearray) -> bytearray:
    # zipfile moves every member back by the excess, to before the file's first byte: the seek there fails
    end = data.rindex(b"PK\x05\x06")
    (offset,) = struct.unpack_from("<I", data, end + 16)
    struct.pack_into("<I", data, end + 16, offset + len(data))
    return data


@pytest.mark.parametrize(
    "damage",
    [
        cut,
        compression_unknown,
        encrypted,
        directory_offset_past_its_place,
        lambda data: bytearray(),
        lambda data: bytearray(b"not a zip archive at all"),
    ],
    ids=["cut", "compression_unknown", "encrypted", "directory_offset", "empty", "not_a_zip"],
)
def test_a_damaged_replay_file_is_refused_in_one_line(tmp_path, damage):
    saved_buffer(tmp_path)
    path = tmp_path / REPLAY_NAME
    path.write_bytes(bytes(damage(bytearray(path.read_bytes()))))
    assert refusal(tmp_path).startswith(f"{where(tmp_path)} cannot be read: ")


def test_a_replay_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    saved_buffer(tmp_path)
    size = (tmp_path / REPLAY_NAME).stat().st_size
    monkeypatch.setattr(dqn_replay, "MAX_REPLAY_BYTES", size - 1)
    message = refusal(tmp_path)
    assert message.startswith(f"{where(tmp_path)} cannot be read: ")
    assert f"is {size:,} bytes, more than the {size - 1:,} allowed" in message


def test_a_replay_file_a_byte_over_64_gib_is_refused_before_it_is_read(tmp_path):
    # a sparse file: its size is all the bound reads, and none of it is written to the disk
    bound = 64 * 2**30
    with open(tmp_path / REPLAY_NAME, "wb") as handle:
        handle.truncate(bound + 1)
    assert refusal(tmp_path).endswith(f"is {bound + 1:,} bytes, more than the {bound:,} allowed: not read")


def test_a_long_reason_is_cut_to_its_first_200_characters(tmp_path):
    folder = tmp_path / ("f" * 220) / "checkpoints"
    (folder / REPLAY_NAME).mkdir(parents=True)  # a folder where the file should be: the reason leads with its path
    path = str(folder / REPLAY_NAME)
    assert len(path) > 201
    assert refusal(folder) == f"{where(folder)} cannot be read: {path[:200]}"


# -- files of another buffer -------------------------------------------------------------------------------------------


def test_an_array_of_a_narrower_dtype_is_refused_naming_what_the_buffer_needs(tmp_path):
    # float16 casts into the buffer's float32 without loss, and is still not a buffer this run wrote
    saved_buffer(tmp_path, count=3)
    arrays = read_arrays(tmp_path)
    name = f"observations.{OBSERVATION}"
    arrays[name] = arrays[name].astype(np.float16)
    rewrite(tmp_path, arrays)
    assert refusal(tmp_path) == (
        f"{where(tmp_path)}: array {name} is float16 (3, {N_ENVS}, {WIDTH}), "
        f"this run's buffer needs float32 (3, {N_ENVS}, {WIDTH})"
    )


@pytest.mark.parametrize("rows", [2, 4])
def test_an_array_of_other_rows_is_refused_naming_the_shape_the_buffer_needs(tmp_path, rows):
    saved_buffer(tmp_path, count=3)
    arrays = read_arrays(tmp_path)
    arrays["rewards"] = np.resize(arrays["rewards"], (rows, N_ENVS))  # a row short, or one the write position never reached
    rewrite(tmp_path, arrays)
    assert refusal(tmp_path) == (
        f"{where(tmp_path)}: array rewards is float32 ({rows}, {N_ENVS}), this run's buffer needs float32 (3, {N_ENVS})"
    )


@pytest.mark.parametrize(
    "extra, dropped, listed",
    [
        (["bonus"], [], "missing none, unexpected ['bonus']"),
        ([], ["steps"], "missing ['steps'], unexpected none"),
        (["bonus"], ["rewards"], "missing ['rewards'], unexpected ['bonus']"),
        # at most three names of each, in order, however many there are
        (["zd", "za", "zc", "zb"], ["timeouts", "actions", "rewards", "dones"],
         "missing ['actions', 'dones', 'rewards'], unexpected ['za', 'zb', 'zc']"),
    ],
)  # fmt: skip
def test_a_file_with_other_arrays_is_refused_naming_them(tmp_path, extra, dropped, listed):
    saved_buffer(tmp_path)
    arrays = read_arrays(tmp_path)
    for name in dropped:
        del arrays[name]
    arrays.update({name: np.zeros(3) for name in extra})
    rewrite(tmp_path, arrays)
    assert refusal(tmp_path) == f"{where(tmp_path)}: arrays do not fit this run's buffer ({listed})"


@pytest.mark.parametrize(
    "name, value",
    [
        ("pos", np.array([3])),  # an integer, in an array of one
        ("full", np.array([[0]])),
        ("steps", np.array(100.0)),  # a single number, not an integer
        ("pos", np.array(3.0)),
    ],
)
def test_a_write_position_or_step_count_that_is_not_one_integer_is_refused(tmp_path, name, value):
    saved_buffer(tmp_path, count=3, steps=100)
    arrays = read_arrays(tmp_path)
    arrays[name] = value
    rewrite(tmp_path, arrays)
    assert refusal(tmp_path) == f"{where(tmp_path)}: pos, full and steps must be single integers"


@pytest.mark.parametrize(
    "pos, steps",
    [(-1, 100), (ROWS, 100), (ROWS + 1, 100), (3, -1), (-1, -1)],
)
def test_a_write_position_outside_the_buffer_or_negative_steps_are_refused(tmp_path, pos, steps):
    # rows 0 .. ROWS - 1 are the buffer's; the step count is the file's own, checked before it is compared
    saved_buffer(tmp_path, count=ROWS + 3, steps=100)  # wrapped: every row filled, so any pos has rows to read
    arrays = read_arrays(tmp_path)
    arrays.update(pos=np.array(pos), steps=np.array(steps))
    rewrite(tmp_path, arrays)
    assert refusal(tmp_path) == (
        f"{where(tmp_path)}: pos {pos} is outside this run's buffer of {ROWS:,} rows, or steps {steps} < 0"
    )
