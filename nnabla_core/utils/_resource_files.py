"""Files of data sets, wherever they are: :class:`FileReader` (a base location: a local
path, an ``http(s)://`` URL or an ``s3://`` URI), :class:`ResourceFileReader` (a path or
a binary file object with its extension) and :func:`get_file_extension`.

Exported by ``nnabla.utils.data_source_loader`` (nnabla's names); kept here, below both
it and ``nnabla.utils.audio_utils``, so that neither imports the other.
"""
from __future__ import annotations

import binascii
import contextlib
import io
import os
import shutil
import tempfile
import urllib.request
from urllib.parse import urljoin

from nnabla.logger import logger

_S3_HINT = "reading s3:// data sets needs boto3: pip install boto3"


def _import_h5py():
    import h5py
    return h5py


def _s3_bucket(bucket_name):
    try:
        import boto3
    except ImportError as error:
        raise ImportError(f"FileReader: {_S3_HINT}") from error
    return boto3.session.Session().resource("s3").Bucket(bucket_name)


def _split_s3(uri):
    body = uri.split("://", 1)[1]
    bucket, _, key = body.partition("/")
    return bucket, key


class FileReader:
    """Open the files of a data set stored locally, on an HTTP(S) server or on S3.

    Relative names given to :meth:`open` are resolved against the directory of
    ``base_uri`` (``\\`` is accepted as a separator). S3 credentials come from the usual
    AWS environment variables (``AWS_ACCESS_KEY_ID``...) or ``AWS_DEFAULT_PROFILE``.

    Args:
        base_uri (str): A file, directory, ``http(s)://`` URL or ``s3://bucket/key`` URI.
    """

    def __init__(self, base_uri):
        self._base_uri = base_uri
        self.base_ext = os.path.splitext(self._base_uri)[1].lower()
        lowered = base_uri.lower()
        if lowered.startswith("s3://"):
            self._file_type = "s3"
            bucket_name, self._s3_base_key = _split_s3(base_uri)
            logger.info(f"Creating session for S3 bucket {bucket_name}")
            self._s3_bucket = _s3_bucket(bucket_name)
        elif lowered.startswith(("http://", "https://")):
            self._file_type = "http"
        else:
            self._file_type = "file"

    def read_s3_object(self, key):
        """The bytes of S3 object ``key`` (up to 10 attempts)."""
        for attempt in range(1, 11):
            try:
                return self._s3_bucket.Object(key).get()["Body"].read()
            except Exception as error:  # network errors of any kind are retried
                last_error = error
                logger.log(99, f"read_s3_object() fails retrying count {attempt}/10.")
        raise OSError(f"FileReader: could not read s3 object {key!r}") from last_error

    def _resolve(self, filename):
        name = filename.replace("\\", "/")
        if self._file_type == "s3":
            joined = urljoin(self._base_uri.replace("s3://", "http://"), name)
            return joined.replace("http://", "s3://")
        if self._file_type == "http":
            return urljoin(self._base_uri, name)
        base_dir = os.path.dirname(self._base_uri.replace("\\", "/"))
        return os.path.abspath(os.path.join(base_dir, name))

    @contextlib.contextmanager
    def open(self, filename=None, textmode=False, encoding="utf-8-sig"):
        """Open ``filename`` (relative to the base) or the base itself for reading.

        The yielded file object has an ``ext`` attribute, the lower-case extension.

        Raises:
            FileNotFoundError: A local file does not exist (the message names it).
        """
        target = self._base_uri if filename is None else self._resolve(filename)
        if self._file_type == "s3":
            data = self.read_s3_object(_split_s3(target)[1])
            f = io.StringIO(data.decode(encoding)) if textmode else io.BytesIO(data)
        elif self._file_type == "http":
            f = urllib.request.urlopen(target)
        else:
            if not os.path.isfile(target):
                raise FileNotFoundError(f"FileReader: file {target!r} does not exist")
            f = open(target, "rt", encoding=encoding) if textmode else open(target, "rb")
        f.ext = os.path.splitext(target)[1].lower()
        try:
            yield f
        finally:
            f.close()

    @contextlib.contextmanager
    def open_cache(self, cache_name):
        """Open the HDF5 cache file ``cache_name`` of the cache directory ``base_uri``."""
        h5py = _import_h5py()
        name = cache_name.replace("\\", "/")
        if self._file_type == "s3":
            tmpdir = tempfile.mkdtemp()
            try:
                target = urljoin((self._base_uri + "/").replace("s3://", "http://"), name)
                key = "/".join(target.split("/")[3:])
                local = os.path.join(tmpdir, os.path.basename(target))
                with open(local, "wb") as f:
                    f.write(self.read_s3_object(key))
                with h5py.File(local, "r") as h5:
                    yield h5
            finally:
                shutil.rmtree(tmpdir, ignore_errors=True)
        elif self._file_type == "http":
            raise ValueError("FileReader.open_cache: cache directories cannot be read over "
                             f"HTTP ({self._base_uri!r})")
        else:
            base_dir = os.path.dirname((self._base_uri + "/").replace("\\", "/"))
            with h5py.File(os.path.abspath(os.path.join(base_dir, name)), "r") as h5:
                yield h5

    def listdir(self):
        """Sorted names of the ``.h5`` files in the base directory (None over HTTP)."""
        if self._file_type == "s3":
            prefix = self._s3_base_key + "/"
            found = self._s3_bucket.objects.filter(Prefix=prefix, Delimiter="/")
            return sorted(os.path.basename(entry.key) for entry in found)
        if self._file_type == "http":
            return None
        return [name for name in sorted(os.listdir(self._base_uri))
                if os.path.splitext(name)[1].lower() == ".h5"]


_FILE_SIGNATURES = {
    ".bmp": (["424d"], 0x0), ".dib": (["424d"], 0x0), ".pgm": (["50350a"], 0x0),
    ".jpeg": (["ffd8ff"], 0x0), ".jpg": (["ffd8ff"], 0x0),
    ".png": (["89504e470d0a1a0a"], 0x0), ".tif": (["492049"], 0x0),
    ".tiff": (["492049"], 0x0), ".eps": (["c5d0d3c6"], 0x0),
    ".gif": (["474946383761", "474946383961"], 0x0), ".ico": (["00000100"], 0x0),
    ".dcm": (["4449434d"], 0x80), ".wav": (["52494646"], 0x0),
}


def get_file_extension(source):
    """The lower-case extension of a path or file object (``''`` when unknown).

    A file object without ``name`` is identified by its leading bytes (the position is
    restored to 0). As in nnabla, the last matching signature wins.
    """
    if isinstance(source, str):
        return os.path.splitext(source)[1].lower()
    if not hasattr(source, "read"):
        return ""
    if hasattr(source, "name") and isinstance(source.name, str):
        return os.path.splitext(source.name)[1].lower()
    ext = ""
    for extension, (signatures, offset) in _FILE_SIGNATURES.items():
        source.seek(offset)
        head = binascii.hexlify(source.read(16)).decode("ascii")
        source.seek(0)
        if any(head.startswith(signature) for signature in signatures):
            ext = extension
    return ext


class ResourceFileReader:
    """A path or binary file object, with its extension in ``ext``.

    Args:
        source (str or binary file object): A path, an opened binary file or a
            ``BytesIO``.

    Raises:
        ValueError: ``source`` is a text stream (``StringIO``, a file opened in text
            mode) or not readable.
    """

    def __init__(self, source):
        self._source = source
        self.handler = None
        if isinstance(source, str):
            self.handler = FileReader(source)
            self.ext = self.handler.base_ext
            if not self.ext:
                with self.handler.open() as f:
                    self.ext = get_file_extension(f)
        elif hasattr(source, "read") and self._accepted_source_type(source):
            self.handler = source
            self.ext = get_file_extension(source)
        else:
            raise ValueError("ResourceFileReader: argument 'source' must be a path, a binary "
                             f"file object or a BytesIO; given {type(source).__name__}")

    @staticmethod
    def _accepted_source_type(source):
        if not hasattr(source, "seek"):
            return False
        try:
            source.seek(0)
            first = source.read(1)
            source.seek(0)
        except Exception:  # unseekable or unreadable streams are refused, whatever the error
            return False
        return not isinstance(first, str)

    @contextlib.contextmanager
    def open(self):
        """Yield a binary file object positioned at 0, with ``ext`` set."""
        if isinstance(self.handler, FileReader):
            with self.handler.open() as f:
                if not f.ext:
                    f.ext = self.ext
                yield f
        else:
            self.handler.seek(0)
            self.handler.ext = self.ext
            yield self.handler
            self.handler.seek(0)
