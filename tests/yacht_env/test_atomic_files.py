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


# -- only a regular file is ever replaced ---------------------------------------------------------


def refused(path) -> str:
    """What ``write_atomically`` says when it refuses ``path``: one line, naming the path asked for."""
    from yacht_env.atomic_files import OutputError

    with pytest.raises(OutputError) as error:
        write_atomically(path, lambda handle: handle.write(b"new"))
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"cannot write {path}: ") and ".partial" not in message
    return message


def no_partial_left(folder) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".partial")]


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    import os
    import stat

    fifo = tmp_path / "out.tex"
    os.mkfifo(fifo)
    assert "a FIFO, not a regular file" in refused(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and no_partial_left(tmp_path)


def test_a_device_is_refused_and_stays_a_device(tmp_path):
    """/dev/full, /dev/null, /dev/stdout: a rename over one turned the device into a regular file (as root)."""
    import os
    import stat

    device = tmp_path / "full"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # /dev/full's numbers, made where a test may
    except PermissionError:
        pytest.skip("making a device node needs root")
    assert "a character device, not a regular file" in refused(device)
    assert stat.S_ISCHR(os.lstat(device).st_mode) and no_partial_left(tmp_path)


def test_a_pipe_named_through_proc_is_refused(tmp_path):
    import os

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    read, write = os.pipe()
    try:
        assert "a FIFO, not a regular file" in refused(f"/proc/self/fd/{write}")
        os.write(write, b"still a pipe")
        assert os.read(read, 100) == b"still a pipe"
    finally:
        os.close(read)
        os.close(write)


def test_a_folder_is_refused_by_its_own_name(tmp_path):
    from yacht_env.atomic_files import OutputError

    folder = tmp_path / "tables"
    folder.mkdir()
    assert "a folder" in refused(folder)
    assert folder.is_dir() and no_partial_left(folder) and no_partial_left(tmp_path)
    with pytest.raises(OutputError) as error:
        write_atomically(folder, lambda handle: None)
    assert error.value.errno == 0  # refused by the project, not by the system: no system error code


def test_a_file_in_folders_not_made_yet_is_written_with_its_folders(tmp_path):
    write_atomically(tmp_path / "runs" / "one" / "eval.json", lambda handle: handle.write(b"{}"))
    assert (tmp_path / "runs" / "one" / "eval.json").read_bytes() == b"{}"


def test_a_symbolic_link_stays_a_link_and_its_file_is_replaced(tmp_path):
    """Documented policy: the link is followed and the regular file it names replaced atomically."""
    import os

    (tmp_path / "target.txt").write_bytes(b"old")
    link = tmp_path / "link.tex"
    link.symlink_to("target.txt")
    chained = tmp_path / "chained.tex"
    chained.symlink_to(link)
    write_atomically(chained, lambda handle: handle.write(b"new"))
    assert os.readlink(chained) == str(link) and os.readlink(link) == "target.txt"
    assert (tmp_path / "target.txt").read_bytes() == b"new" and no_partial_left(tmp_path)


def test_a_link_to_nothing_or_to_a_fifo_is_refused(tmp_path):
    import os

    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("nowhere.json")
    assert "a symbolic link to nowhere.json, which does not exist" in refused(dangling)
    assert os.path.islink(dangling) and not (tmp_path / "nowhere.json").exists()
    os.mkfifo(tmp_path / "fifo")
    to_fifo = tmp_path / "to_fifo.json"
    to_fifo.symlink_to("fifo")
    assert "a FIFO" in refused(to_fifo)
    assert os.path.islink(to_fifo)


def test_a_path_under_a_file_names_the_path(tmp_path):
    (tmp_path / "a-file").write_bytes(b"")
    assert "Not a directory" in refused(tmp_path / "a-file" / "out.json")


# -- the error each failure gives: its reason and its code -------------------------------------------------------


def test_an_os_error_on_the_way_gives_its_own_reason_and_code(tmp_path):
    import errno

    from yacht_env.atomic_files import OutputError, output_folder, output_target

    (tmp_path / "a-file").write_bytes(b"")
    for check in (output_target, output_folder, lambda path: write_atomically(path, lambda handle: None)):
        with pytest.raises(OutputError) as error:
            check(tmp_path / "a-file" / "out.json")
        assert error.value.errno == errno.ENOTDIR
        assert str(error.value) == f"cannot write {tmp_path / 'a-file' / 'out.json'}: Not a directory"


def test_an_error_without_a_code_gives_its_text_and_code_0(tmp_path, monkeypatch):
    """An ``OSError("...")`` raised by a writer (or by what a library wraps) carries no errno or strerror."""
    import tempfile

    from yacht_env import atomic_files
    from yacht_env.atomic_files import OutputError, output_folder, output_target

    def fails(*args, **kwargs):
        raise OSError("the disk went away")

    def refusal(write) -> OutputError:
        with pytest.raises(OutputError) as error:
            write()
        assert str(error.value) == f"cannot write {tmp_path / 'out.json'}: the disk went away"
        assert error.value.errno == 0
        return error.value

    assert isinstance(refusal(lambda: write_atomically(tmp_path / "out.json", fails)).__cause__, OSError)
    assert no_partial_left(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkstemp", fails)
        refusal(lambda: write_atomically(tmp_path / "out.json", lambda handle: None))
    with monkeypatch.context() as patch:
        patch.setattr(atomic_files.os, "stat", fails)
        refusal(lambda: output_target(tmp_path / "out.json"))
    with monkeypatch.context() as patch:
        patch.setattr(atomic_files.Path, "mkdir", fails)
        refusal(lambda: output_folder(tmp_path / "out.json"))


def test_a_missing_output_folder_is_made_with_its_parents_and_an_existing_one_kept(tmp_path):
    from yacht_env.atomic_files import output_folder

    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "old.png").write_bytes(b"old")
    assert output_folder(tmp_path / "kept") == tmp_path / "kept"
    assert (tmp_path / "kept" / "old.png").read_bytes() == b"old"
    assert output_folder(tmp_path / "new" / "plots" / "run") == tmp_path / "new" / "plots" / "run"
    assert (tmp_path / "new" / "plots" / "run").is_dir()
    (tmp_path / "a-file").write_bytes(b"")
    with pytest.raises(OSError, match=r"a-file: it is a regular file, not a folder; give a folder path$"):
        output_folder(tmp_path / "a-file")


def test_outputs_are_checked_before_any_work_skipping_none_and_folders_not_made_yet(tmp_path):
    from yacht_env.atomic_files import OutputError, check_outputs

    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_bytes(b"")
    check_outputs(files=[None, tmp_path / "a-file", tmp_path / "new.json"], folders=[None, tmp_path / "a-folder"])
    check_outputs(folders=[tmp_path / "later" / "plots"])
    assert not (tmp_path / "later").exists()  # checked only: made by the write at the end
    with pytest.raises(OutputError, match="a-folder: it is a folder; give a file path in it$"):
        check_outputs(files=[None, tmp_path / "new.json", tmp_path / "a-folder"])
    with pytest.raises(OutputError, match="a-file: it is a regular file, not a folder"):
        check_outputs(folders=[None, tmp_path / "a-file"])
