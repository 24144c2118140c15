"""Reading and writing NNP files defensively: archives, text and binary protobuf, atomic saves.

An ``.nnp`` file is a zip archive (members ``nnp_version.txt``, ``network.nntxt``,
``parameter.h5`` or ``parameter.protobuf``, optionally solver states ``*.optimizer``);
``.nntxt``/``.prototxt`` hold an ``NNablaProtoBuf`` in protobuf's text format and
``.protobuf`` the same message in binary.

Reading never extracts anything to disk and never trusts an archive's directory: member
names must be relative, without ``..``, backslashes or duplicates; each member is read
through a bounded reader (:data:`LIMITS`), so a decompression bomb or a lying header stops
at the limit. Every refusal is an :class:`~nnabla.utils._nnp_functions.NnpFormatError`
naming the file and the member. Writing a path goes to a temporary file in the same
folder, fsync'ed, then renamed over the target.
"""
from __future__ import annotations

import io
import os
import posixpath
import zipfile

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from .._atomic import write_atomically, write_path_atomically
from ._nnp_functions import NnpFormatError

# Bounds for reading: one member's uncompressed size, all members together, the number of
# members, and the compression ratio above which a large member is taken for a bomb.
LIMITS = {
    "member_bytes": 4 << 30,
    "total_bytes": 8 << 30,
    "members": 10000,
    "ratio": 1000,
    "ratio_floor_bytes": 16 << 20,
}

TEXT_EXTENSIONS = (".nntxt", ".prototxt")
PROTOBUF_EXTENSION = ".protobuf"


def describe(source):
    """A printable name for a path or file object."""
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    name = getattr(source, "name", None)
    return repr(name) if isinstance(name, str) else "<file object>"


def extension_of(source, extension):
    """The format of ``source``: its file extension, or ``extension`` for a file object."""
    if isinstance(source, (str, os.PathLike)):
        ext = os.path.splitext(os.fspath(source))[1]
        return ext if ext else extension
    return extension


def _check_member_name(name, where):
    if (not name or name.startswith(("/", "\\")) or "\\" in name or "\x00" in name
            or (len(name) > 1 and name[1] == ":")):
        raise NnpFormatError(f"{where}: member {name!r} has an absolute or unsafe name; refused")
    parts = posixpath.normpath(name).split("/")
    if ".." in name.split("/") or parts[0] == "..":
        raise NnpFormatError(f"{where}: member {name!r} points outside the archive; refused")


def _read_bounded(archive, info, where, budget):
    limit = min(LIMITS["member_bytes"], budget)
    if info.file_size > limit:
        raise NnpFormatError(f"{where}: member {info.filename!r} declares {info.file_size} "
                             f"bytes; the limit is {limit}")
    if (info.file_size > LIMITS["ratio_floor_bytes"]
            and info.file_size > LIMITS["ratio"] * max(info.compress_size, 1)):
        raise NnpFormatError(f"{where}: member {info.filename!r} expands {info.compress_size} "
                             f"bytes to {info.file_size}; refused as a decompression bomb")
    try:
        with archive.open(info, "r") as stream:
            data = stream.read(info.file_size + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError) as error:
        raise NnpFormatError(f"{where}: member {info.filename!r} is damaged: {error}") from None
    if len(data) != info.file_size:
        raise NnpFormatError(f"{where}: member {info.filename!r} holds {len(data)} bytes, "
                             f"not the {info.file_size} its header declares")
    return data


def read_archive(source):
    """The members of an ``.nnp`` archive, in archive order, after every check.

    Args:
        source (str, os.PathLike or binary file object): the archive.

    Returns:
        list of (str, bytes): ``(member name, content)``; directories are left out.

    Raises:
        FileNotFoundError: if a path does not exist.
        NnpFormatError: for a non-zip file, unsafe or duplicate names, or sizes over
            :data:`LIMITS`.
    """
    where = describe(source)
    if isinstance(source, (str, os.PathLike)) and not os.path.exists(source):
        raise FileNotFoundError(f"no such NNP file: {where}")
    try:
        archive = zipfile.ZipFile(source, "r")
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise NnpFormatError(f"{where} is not an NNP (zip) archive: {error}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > LIMITS["members"]:
            raise NnpFormatError(f"{where}: {len(infos)} members; the limit is "
                                 f"{LIMITS['members']}")
        seen, members, budget = set(), [], LIMITS["total_bytes"]
        for info in infos:
            _check_member_name(info.filename, where)
            if info.filename in seen:
                raise NnpFormatError(f"{where}: member {info.filename!r} appears twice; "
                                     f"refused (which one counts would be ambiguous)")
            seen.add(info.filename)
            if info.is_dir():
                continue
            data = _read_bounded(archive, info, where, budget)
            budget -= len(data)
            members.append((info.filename, data))
    return members


def read_source(source, binary):
    """The whole content of a path or file object (bytes if ``binary``, else text)."""
    if isinstance(source, (str, os.PathLike)):
        if not os.path.exists(source):
            raise FileNotFoundError(f"no such file: {describe(source)}")
        with open(source, "rb") as stream:
            data = stream.read(LIMITS["member_bytes"] + 1)
    else:
        data = source.read(LIMITS["member_bytes"] + 1)
    if len(data) > LIMITS["member_bytes"]:
        raise NnpFormatError(f"{describe(source)} is larger than {LIMITS['member_bytes']} "
                             f"bytes; refused")
    if binary:
        return data if isinstance(data, bytes) else data.encode("utf-8")
    return data.decode("utf-8") if isinstance(data, bytes) else data


def merge_text(proto, text, where):
    """Merge protobuf text ``text`` into ``proto``; errors name ``where``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NnpFormatError(f"{where}: not UTF-8 text: {error}") from None
    try:
        text_format.Merge(text, proto)
    except text_format.ParseError as error:
        raise NnpFormatError(f"{where}: malformed NNP text: {error}") from None


def merge_binary(proto, data, where):
    """Merge serialized protobuf ``data`` into ``proto``; errors name ``where``."""
    try:
        proto.MergeFromString(data)
    except (DecodeError, ValueError, RuntimeError) as error:
        raise NnpFormatError(f"{where}: malformed NNP protobuf: {error}") from None


def to_text(proto):
    """``proto`` in protobuf's text format, as nnabla prints it."""
    return text_format.MessageToString(proto)


def write_target(target, payload, binary):
    """Write ``payload`` to a path (atomically) or to a file object."""
    if isinstance(target, (str, os.PathLike)):
        if binary:
            write_atomically(target, lambda stream: stream.write(payload))
        else:
            write_atomically(target, lambda stream: stream.write(payload), "w",
                             encoding="utf-8", newline="\n")
    else:
        if isinstance(payload, str) and is_binary_stream(target):
            payload = payload.encode("utf-8")
        target.write(payload)


def is_binary_stream(target):
    """Whether a file object takes bytes (``io.BytesIO``, files opened with ``'b'``)."""
    return isinstance(target, (io.BufferedIOBase, io.RawIOBase)) or "b" in getattr(
        target, "mode", "")


def write_archive(target, members):
    """Write an ``.nnp`` zip with ``members`` (name, bytes or str) in order.

    A path target is written atomically; a file object receives the archive bytes.
    """
    def fill(stream):
        with zipfile.ZipFile(stream, "w") as archive:
            for name, content in members:
                archive.writestr(name, content)

    if isinstance(target, (str, os.PathLike)):
        write_path_atomically(target, fill)
    else:
        buffer = io.BytesIO()
        fill(buffer)
        target.write(buffer.getvalue())
