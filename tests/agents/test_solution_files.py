"""Every solved array on disk is read through one checking reader (agents.solvers.array_files): the two-player
layers refuse a damaged, forged or foreign file in one line, a solve writes such a layer again, and a cache
folder that cannot take a solution is said in one line before the solve starts."""

from __future__ import annotations

import os
import re
import shutil
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import agents.two_player as two_player
from agents.solvers.array_files import ArrayFileError, checksum_path, read_array, write_array
from agents.solvers.solution_cache import CacheFolderError, check_folder
from agents.two_player import SolutionDamaged, load_two_player, solve_two_player
from agents.two_player.__main__ import main
from agents.two_player.kernel import SCALE
from agents.two_player.solve import layer_path, solution_folder
from yacht_env.rules import Category, RuleSet, total, upper

RULES = RuleSet(
    name="files_game",
    categories=(Category("ones", upper(1)), Category("twos", upper(2)), Category("sum", total)),
    num_dice=2,
    num_faces=3,
    rolls_per_turn=2,
)
LAYERS = range(1, 2 * RULES.num_rows + 1)

arrays = st.sampled_from([np.uint16, np.float64]).flatmap(
    lambda dtype: st.lists(st.integers(1, 6), min_size=1, max_size=3).flatmap(
        lambda shape: st.builds(
            lambda seed: np.random.default_rng(seed).integers(0, 60_000, size=shape).astype(dtype), st.integers(0, 2**32)
        )
    )
)


@given(values=arrays, position=st.integers(0, 10**6), flip=st.integers(1, 255))
def test_any_changed_byte_of_a_written_array_is_refused(tmp_path_factory, values, position, flip):
    path = tmp_path_factory.mktemp("array") / "values.npy"
    write_array(path, values)
    for mmap in (False, True):
        np.testing.assert_array_equal(read_array(path, values.dtype, values.shape, mmap=mmap), values)
    data = bytearray(path.read_bytes())
    data[position % len(data)] ^= flip
    path.write_bytes(bytes(data))
    with pytest.raises(ArrayFileError, match=f"^{path}"):
        read_array(path, values.dtype, values.shape)


@given(values=arrays, cut=st.integers(-200, 200).filter(lambda n: n != 0))
def test_a_file_of_any_other_size_is_refused_before_its_values_are_read(tmp_path_factory, values, cut):
    path = tmp_path_factory.mktemp("array") / "values.npy"
    write_array(path, values)
    checksum_path(path).unlink()  # a file from before checksums: its size is still checked
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut < 0 else data + bytes(cut))
    with pytest.raises(ArrayFileError, match="bytes, expected|not a .npy array file|empty"):
        read_array(path, values.dtype, values.shape)


def write_npy(path, values, version=None) -> None:
    """A .npy file as numpy writes it (in format ``version``, or numpy's choice), without a checksum beside it."""
    with open(path, "wb") as handle:
        np.lib.format.write_array(handle, values, version=version)


@pytest.mark.parametrize("version", [(2, 0), (1, 0)])
def test_a_file_in_either_npy_format_version_numpy_writes_is_read(tmp_path, version):
    values = np.arange(12, dtype=np.uint16).reshape(3, 4)
    path = tmp_path / "values.npy"
    write_npy(path, values, version)
    np.testing.assert_array_equal(read_array(path, np.uint16, (3, 4)), values)


@pytest.mark.parametrize("version", [(3, 0), (0, 9), (1, 1), (2, 1)])
def test_a_file_of_any_other_npy_format_version_is_refused_naming_it(tmp_path, version):
    values = np.arange(12, dtype=np.uint16).reshape(3, 4)
    path = tmp_path / "values.npy"
    # a valid header of the nearest version numpy reads, under another version number
    write_npy(path, values, (1, 0) if version < (2, 0) else (2, 0))
    data = bytearray(path.read_bytes())
    data[6:8] = bytes(version)
    path.write_bytes(bytes(data))
    with pytest.raises(
        ArrayFileError, match=rf"^{path} is not a .npy array file \(format version \({version[0]}, {version[1]}\)\)$"
    ):
        read_array(path, np.uint16, (3, 4))


@pytest.mark.parametrize(
    "stored, message",
    [
        (np.zeros((2, 6), dtype=np.uint16), "holds a uint16 array of shape (2, 6) (C order), expected uint16 of shape (3, 4)"),
        (np.zeros((3, 4), dtype=np.int16), "holds a int16 array of shape (3, 4) (C order), expected uint16 of shape (3, 4)"),
        (
            np.asfortranarray(np.arange(12, dtype=np.uint16).reshape(3, 4)),
            "holds a uint16 array of shape (3, 4) (Fortran order), expected uint16 of shape (3, 4)",
        ),
    ],
)
def test_an_array_of_the_same_size_but_another_shape_dtype_or_order_is_refused_by_its_header(tmp_path, stored, message):
    path = tmp_path / "values.npy"
    write_npy(path, stored)
    with pytest.raises(ArrayFileError, match=f"^{re.escape(f'{path} {message}')}$"):
        read_array(path, np.uint16, (3, 4))


@pytest.mark.parametrize("mmap", [False, True])
def test_an_array_read_is_read_only(tmp_path, mmap):
    path = write_array(tmp_path / "values.npy", np.arange(6, dtype=np.uint16))
    values = read_array(path, np.uint16, (6,), mmap=mmap)
    assert not values.flags.writeable
    with pytest.raises(ValueError):
        values[0] = 7


@pytest.mark.parametrize("size", [1_000, 1_001])
def test_a_checksum_file_is_read_up_to_a_thousand_bytes_and_refused_past_them(tmp_path, size):
    values = np.arange(6, dtype=np.uint16)
    path = write_array(tmp_path / "values.npy", values)
    line = checksum_path(path).read_bytes()
    checksum_path(path).write_bytes(line + b" " * (size - len(line)))  # the digest first, then padding
    if size <= 1_000:
        np.testing.assert_array_equal(read_array(path, np.uint16, (6,)), values)
    else:
        with pytest.raises(ArrayFileError, match=rf"^{checksum_path(path)} is not a checksum file: not read$"):
            read_array(path, np.uint16, (6,))


@pytest.mark.parametrize("special", ["fifo", "device", "folder"])
def test_a_path_that_is_not_a_regular_file_is_refused_without_reading(tmp_path, special):
    path = tmp_path / "values.npy"
    {"fifo": os.mkfifo, "device": lambda p: p.symlink_to("/dev/zero"), "folder": os.mkdir}[special](path)
    with pytest.raises(ArrayFileError, match="is not a regular file"):
        read_array(path, np.uint16, (10**9,))  # a FIFO would block, /dev/zero would read 2 GB
    assert read_array(tmp_path / "absent.npy", np.uint16, (3,)) is None


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """The small game solved into a fresh cache folder: the folder, and its layer files' bytes."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(cache))
        patch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())
        solve_two_player(RULES)
        folder = solution_folder(RULES, "game")
    assert folder is not None and folder.parent == cache
    return folder, {path.name: path.read_bytes() for path in folder.iterdir()}


@pytest.fixture
def copy(solved, tmp_path, monkeypatch):
    """A copy of the solved game's cache, that this process has not loaded yet; the copy's folder."""
    folder, _ = solved
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())
    shutil.copytree(folder, tmp_path / folder.name)
    return tmp_path / folder.name


def forge(folder, num_open: int, make, keep_checksum: bool = False):
    """Replace layer ``num_open`` by ``make(values)``: with its checksum left as it was, or with none (an old file)."""
    path = layer_path(folder, num_open)
    values = np.load(path)
    path.unlink()
    if not keep_checksum:
        checksum_path(path).unlink()
    np.save(path, make(values))


DAMAGES = {
    "empty": lambda folder, n: layer_path(folder, n).write_bytes(b""),
    "truncated": lambda folder, n: layer_path(folder, n).write_bytes(layer_path(folder, n).read_bytes()[:-2]),
    "a value changed": lambda folder, n: forge(folder, n, lambda v: v ^ np.uint16(1), keep_checksum=True),
    "fifo": lambda folder, n: (layer_path(folder, n).unlink(), os.mkfifo(layer_path(folder, n))),
    "device": lambda folder, n: (layer_path(folder, n).unlink(), layer_path(folder, n).symlink_to("/dev/zero")),
    "0xFFFF, no checksum": lambda folder, n: forge(folder, n, lambda v: np.full_like(v, 0xFFFF)),
    "zeros, no checksum": lambda folder, n: forge(folder, n, np.zeros_like),
    "ones, no checksum": lambda folder, n: forge(folder, n, lambda v: np.full_like(v, int(SCALE))),
    "foreign shape": lambda folder, n: forge(folder, n, lambda v: v[:-1]),
}


@pytest.mark.parametrize("num_open", [1, LAYERS[-1]])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_layer_is_refused_in_one_line_naming_the_file_and_the_command(copy, damage, num_open):
    if damage.startswith(("zeros", "ones")) and num_open == LAYERS[-1]:
        pytest.skip("the first turn's layer has no settled end to catch a forgery by: its checksum does")
    DAMAGES[damage](copy, num_open)
    with pytest.raises(SolutionDamaged) as refused:
        load_two_player(RULES)
    message = str(refused.value)
    assert "\n" not in message and layer_path(copy, num_open).name in message
    assert "`agents.two_player.solve_two_player(rules)` solves it again" in message


def test_a_layer_written_before_checksums_is_taken_after_its_range_checks(copy, solved):
    for num_open in LAYERS:
        checksum_path(layer_path(copy, num_open)).unlink()
    solution = load_two_player(RULES)
    assert 0 < solution.start_value() < 1
    for num_open in LAYERS:
        assert solution.layers[num_open].tobytes() == np.load(layer_path(solved[0], num_open)).tobytes()


def test_a_solve_writes_a_damaged_layer_again_to_the_same_bytes(copy, solved, capsys):
    for num_open in (2, 4):
        DAMAGES["empty" if num_open == 2 else "a value changed"](copy, num_open)
    solution = solve_two_player(RULES)
    assert {path.name: path.read_bytes() for path in copy.iterdir()} == solved[1]
    assert solution.start_value() == load_two_player(RULES).start_value()
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2
    assert said[0].endswith("layer-02.npy is empty (0 bytes): a write was cut short or the disk was full: solved again")
    assert said[1].endswith("layer-04.npy does not match its checksum layer-04.npy.sha256: the file is damaged: solved again")


def test_a_cache_folder_that_cannot_take_a_solution_is_said_in_one_line(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("YACHT_RL_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(two_player, "_solutions", weakref.WeakKeyDictionary())
    assert main(["--rules", "yacht", "--rows", "ones,twos", "--no-progress"]) == 1
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("error: cannot store the two-player solution in ") and f"{blocker} is a file, not a folder" in error
    with pytest.raises(CacheFolderError, match=r"needs 931322574.62 GiB, the disk has [0-9.]+ GiB free"):
        check_folder(tmp_path, 10**18, "it")
