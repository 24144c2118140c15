"""nnabla._atomic: the one way files are written (old file or complete new one)."""
import os
import stat

import pytest

from nnabla._atomic import write_atomically, write_path_atomically


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def fail(stream):
        stream.write("half")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, fail, "w")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_writes_replace_the_file_keeping_its_permissions(tmp_path):
    target = tmp_path / "g.bin"
    target.write_bytes(b"x")
    os.chmod(target, 0o640)
    write_path_atomically(target, lambda tmp: open(tmp, "wb").write(b"new"))
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    write_atomically(tmp_path / "h.csv", lambda s: s.write("a\nb\n"), "w", newline="")
    assert (tmp_path / "h.csv").read_text() == "a\nb\n"
