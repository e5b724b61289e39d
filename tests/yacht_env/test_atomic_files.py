import pytest

from yacht_env.atomic_files import remove_partial_files, write_atomically


def test_a_write_that_fails_leaves_the_old_file_and_no_partial(tmp_path):
    path = tmp_path / "record.json"
    write_atomically(path, lambda handle: handle.write(b"old"))

    def crash(handle):
        handle.write(b"half of the new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, crash)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_partial_files_are_hidden_never_match_the_target_name_and_are_removable(tmp_path):
    folder = tmp_path / "runs"
    seen = []
    write_atomically(folder / "step_10.zip", lambda handle: seen.extend(p.name for p in folder.iterdir()) or handle.write(b"x"))
    [temporary] = seen  # while writing, only the temporary file exists
    assert temporary.startswith(".step_10.zip.") and temporary.endswith(".partial")
    stale = folder / temporary
    stale.write_bytes(b"left by a kill")
    keep = folder / "notes.partial"  # not hidden: not ours, so it stays
    keep.write_bytes(b"")
    assert remove_partial_files(tmp_path) == [stale]
    assert not stale.exists() and keep.exists() and (folder / "step_10.zip").read_bytes() == b"x"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_get_the_permissions_a_plain_open_gives(tmp_path, umask):
    """Defect 9: mkstemp made every output file 0600 whatever the umask."""
    import os
    import stat

    old = os.umask(umask)
    try:
        write_atomically(tmp_path / "atomic.json", lambda handle: handle.write(b"{}"))
        with open(tmp_path / "plain.json", "wb") as handle:
            handle.write(b"{}")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "atomic.json").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain.json").stat().st_mode) == 0o666 & ~umask
