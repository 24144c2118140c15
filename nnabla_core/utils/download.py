"""Downloading data files into nnabla's data home (``nnabla.utils.download``).

nnabla keeps downloaded data sets and models under ``~/nnabla_data``
(:func:`get_data_home`). :func:`download` fetches a URL with a tqdm progress bar into a
temporary file beside the target and renames it into place, so an interrupted download
never leaves a partial file under the target's name. Without a network connection it
raises an error naming the URL and the path where the file can be put by hand.
"""
from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request

from ..logger import logger

__all__ = ["DownloadError", "download", "get_data_home"]

_CHUNK = 1 << 20


class DownloadError(OSError):
    """A file could not be downloaded (the message names the URL and the target path)."""


def get_data_home():
    """nnabla's data folder, ``~/nnabla_data`` (``./nnabla_data`` when the home folder is
    the root), created when missing.

    Returns:
        str: the folder.
    """
    home = os.path.expanduser("~/nnabla_data")
    if home == "/nnabla_data":
        home = "./nnabla_data"
    os.makedirs(home, exist_ok=True)
    return home


def _fetch(url, target):
    from tqdm import tqdm

    folder = os.path.dirname(os.path.abspath(target))
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".download-", dir=folder)
    try:
        with urllib.request.urlopen(url) as response, os.fdopen(fd, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0)
            with tqdm(total=total, desc=url.split("/")[-1], unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
                while True:
                    chunk = response.read(_CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    bar.update(len(chunk))
            out.flush()
            os.fsync(out.fileno())
            if total and out.tell() != total:
                raise DownloadError(f"download: {url} ended after {out.tell()} of {total} "
                                    f"bytes")
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def download(url, output_file=None, open_file=True, allow_overwrite=False):
    """Download ``url`` (unless the file is already there).

    Args:
        url (str): the URL (``file://`` URLs work too).
        output_file (str, optional): where to write it; default: the URL's last path
            component in :func:`get_data_home`.
        open_file (bool): return the file opened for binary reading.
        allow_overwrite (bool): download again even when the file exists.

    Returns:
        file object (``open_file=True``) or None.

    Raises:
        DownloadError: the URL could not be read; the message says where to put the file.

    Example:
        >>> import os, tempfile, pathlib
        >>> from nnabla.utils.download import download
        >>> folder = tempfile.mkdtemp()
        >>> source = os.path.join(folder, 'source.bin')
        >>> _ = open(source, 'wb').write(b'abc')
        >>> target = os.path.join(folder, 'copy.bin')
        >>> with download(pathlib.Path(source).as_uri(), target) as f:
        ...     f.read()
        b'abc'
    """
    target = output_file if output_file is not None else os.path.join(
        get_data_home(), url.split("/")[-1])
    if os.path.exists(target) and not allow_overwrite:
        logger.info(f"> {target} already exists.")
        logger.info("> If you have any issue when using this file, ")
        logger.info("> manually remove the file and try download again.")
    else:
        try:
            _fetch(url, target)
        except (urllib.error.URLError, OSError, ValueError) as error:
            if isinstance(error, DownloadError):
                raise
            reason = getattr(error, "reason", error)
            raise DownloadError(
                f"download: could not download {url} ({reason}). Without network access, "
                f"fetch the file elsewhere and put it at {os.path.abspath(target)}") from error
    if not open_file:
        return None
    return open(target, "rb")
