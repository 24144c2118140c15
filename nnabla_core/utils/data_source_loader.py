"""Readers of data-set files (``nnabla.utils.data_source_loader``).

:class:`FileReader` opens files relative to a base location (a local path, an
``http(s)://`` URL or an ``s3://`` URI), :class:`ResourceFileReader` wraps a path or a
binary file object together with its extension, and :func:`load` maps a file extension
to the loader that turns the file into a numpy array (images through
``nnabla.utils.image_utils``' configured backend, CSV, ``.npy`` and audio).
"""
from __future__ import annotations

import binascii
import contextlib
import csv
import io
import os
import shutil
import tempfile
import urllib.request
from urllib.parse import urljoin

import numpy

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


def _source_name(file):
    return getattr(file, "name", None) or repr(file)


def load_image_imread(file, shape=None, max_range=1.0):
    """Read an image as a channel-first array.

    Args:
        file (str or file object): The image.
        shape (tuple of int or None): ``(channels, height, width)`` of the result; the
            image is resized when the size differs. None keeps the file's size.
        max_range (float): Values are scaled to ``[0, max_range]`` (from 0..255, or
            0..65535 for 16-bit images); a negative value keeps the raw values.

    Returns:
        numpy.ndarray: ``(channels, height, width)``.

    Raises:
        ValueError: The image does not decode, or ``shape`` asks for another number of
            channels than the image has.
    """
    from nnabla.utils.image_utils import imread, imresize
    try:
        img = imread(file)
    except Exception as error:
        raise ValueError(f"load_image: cannot decode image {_source_name(file)!r}: "
                         f"{error}") from error
    if img.ndim == 2:
        img = img[:, :, None]
        gray = True
    else:
        gray = False
    height, width, channels = img.shape
    out_channels, out_height, out_width = (channels, height, width) if shape is None \
        else tuple(shape)
    if out_channels != channels:
        raise ValueError(f"load_image: image {_source_name(file)!r} has {channels} channel(s); "
                         f"shape={tuple(shape)} asks for {out_channels}")
    if (out_height, out_width) != (height, width):
        # imresize takes (width, height); nnabla 1.39 passes (height, width) here, which
        # transposes gray images and fails for color ones
        img = imresize(img[:, :, 0] if gray else img, (out_width, out_height))
        img = img.reshape(out_height, out_width, out_channels)
    img = img.transpose(2, 0, 1)
    if max_range < 0:
        return img
    full_scale = 65535.0 if img.dtype == numpy.uint16 else 255.0
    return img if max_range == full_scale else img * (max_range / full_scale)


def load_image(file, shape=None, normalize=False):
    """Read an image as ``(channels, height, width)``; ``normalize`` scales to [0, 1]."""
    return load_image_imread(file, shape, 1.0 if normalize else -1)


def load_csv(file, shape=None, normalize=False):
    """Read a numeric CSV file (binary file object) into a float64 array.

    Raises:
        ValueError: A cell is not a number, rows have different lengths, or the values
            do not fit ``shape``; the message names the file.
    """
    name = _source_name(file)
    rows = []
    text = [line.decode("utf-8") for line in file.readlines()]
    for line_number, row in enumerate(csv.reader(text), start=1):
        if row:
            try:
                rows.append([float(value) for value in row])
            except ValueError as error:
                raise ValueError(f"load_csv: {name!r} line {line_number}: {error}") from None
    try:
        values = numpy.array(rows)
        return values if shape is None else values.reshape(shape)
    except ValueError as error:
        raise ValueError(f"load_csv: cannot make an array of {name!r}: {error}") from None


def load_npy(path, shape=None, normalize=False):
    """Read a ``.npy`` file, reshaped to ``shape`` when given."""
    values = numpy.load(path, allow_pickle=True)
    return values if shape is None else values.reshape(shape)


def load_wav(path, shape=None, normalize=False):
    """Read a WAV file with scipy as ``(samples, channels)``."""
    import scipy.io.wavfile
    wav = scipy.io.wavfile.read(path)[1]
    if shape is not None:
        return wav.reshape(shape)
    return wav.reshape(-1, 1) if wav.ndim == 1 else wav


def _pydub_available():
    from nnabla.utils import audio_utils
    return "pydub" in audio_utils.get_available_backends()


def load_audio_pydub(path, shape=None, normalize=False):
    """Read audio with ``nnabla.utils.audio_utils``, resized to ``shape`` when given."""
    from nnabla.utils.audio_utils import auread, auresize
    audio = auread(path)
    return auresize(audio, shape) if shape else audio


def load_audio(file, shape=None, normalize=False):
    """Read audio with pydub when installed, otherwise the WAV reader of scipy."""
    if _pydub_available():
        return load_audio_pydub(file, shape, normalize)
    return load_wav(file, shape, normalize)


_load_functions = {
    ".bmp": load_image, ".jpg": load_image, ".jpeg": load_image, ".png": load_image,
    ".gif": load_image, ".tif": load_image, ".tiff": load_image, ".dcm": load_image,
    ".csv": load_csv, ".npy": load_npy, ".wav": load_audio,
}


def load(ext):
    """The loader for files with extension ``ext`` (``'.png'``...).

    A callback module (``nnabla.utils.callback.get_load_image_func``) may supply its own.

    Raises:
        ValueError: No loader handles ``ext``.
    """
    import nnabla.utils.callback as callback
    func = callback.get_load_image_func(ext)
    if func is not None:
        return func
    if ext in _load_functions:
        return _load_functions[ext]
    raise ValueError(f'File format with extension "{ext}" is not supported '
                     f"(supported: {', '.join(sorted(_load_functions))}).")


def _download_hook(bar):
    last_block = [0]

    def inner(block=1, block_size=1, total_size=None):
        if total_size is not None:
            bar.total = total_size
        bar.update((block - last_block[0]) * block_size)
        last_block[0] = block
    return inner
