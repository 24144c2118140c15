"""Atomic file writes: every file the framework saves goes through here.

The content is written to a temporary file in the target's folder, flushed to disk, given
the permissions ``open(path, 'w')`` would give, and renamed over the target; if writing
fails or is interrupted the temporary file is removed and the target is untouched. A kill
at any moment leaves the old file or the complete new one.
"""
from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["atomic_path", "write_path_atomically", "write_atomically"]


def _file_mode(path):
    """The permissions ``open(path, 'w')`` would leave (mkstemp makes files private): the
    existing file's, else the default under the umask."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path to write ``path``'s new content at; on a normal exit it
    replaces ``path``, on an exception it is removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-" + os.path.basename(path) + "-")
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_path_atomically(path, write):
    """Call ``write(tmp_path)`` (for writers that want a path, e.g. h5py), then install the
    file at ``path``."""
    with atomic_path(path) as tmp:
        write(tmp)


def write_atomically(path, write, mode="wb", **open_kwargs):
    """Call ``write(file)`` on the temporary file opened with ``mode`` (and
    ``open_kwargs``, e.g. ``newline=''``), then install it at ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, **open_kwargs) as f:
            write(f)
