"""``nnabla_cli create_tar`` and ``nnabla_cli upload``: datasets for Neural Network Console.

``create_tar SOURCE.csv DEST.tar`` packs a CSV dataset as Neural Network Console reads it:
``index.csv`` (the CSV with every data-file reference replaced by ``data/<12-digit
counter>_<file name>``) and those files under ``data/``. ``upload TOKEN FILE`` sends such a
tar (or makes one from a CSV first) to the console's storage: it asks the endpoint
(``-e``, ``$NNC_ENDPOINT`` or ``https://console-api.dl.sony.com``) for upload credentials and
uploads with boto3; without network access it fails with a clear message.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from ..._atomic import write_path_atomically

DEFAULT_ENDPOINT = "https://console-api.dl.sony.com"


def _log(text):
    print(text)


class Uploader:
    """Builds dataset tar files and uploads them (nnabla's ``Uploader``)."""

    def __init__(self, log=_log, token=None, progress=None):
        from .utility import progress_bar

        self._log = log
        self._bar = progress or progress_bar

    def _data_file(self, item, csv_dir):
        if os.path.isfile(item):
            return item
        candidate = os.path.join(csv_dir, *item.split("\\"))
        return candidate if os.path.isfile(candidate) else None

    def createCsvData(self, csvfilename):
        """``(rows, data files)``: rows with file references renamed, name -> path.

        Returns ``(None, None)`` when a row has a different number of columns than the
        header.
        """
        data_files, rows = {}, []
        with open(csvfilename, newline="", encoding="utf-8-sig") as stream:
            lines = list(csv.reader(stream))
        csv_dir = os.path.dirname(csvfilename)
        with self._bar(len(lines), "Create CSV") as bar:
            for line_number, row in enumerate(lines):
                bar.update(1)
                if line_number and len(row) != len(lines[0]):
                    self._log(f"invalid line {line_number} in csv file.")
                    return None, None
                new_row = []
                for item in row:
                    data_file = self._data_file(item, csv_dir) if line_number else None
                    if data_file is None:
                        new_row.append(item)
                        continue
                    name = f"data/{len(data_files):012d}_{os.path.basename(data_file)}"
                    data_files[name] = os.path.abspath(data_file)
                    new_row.append(name)
                rows.append(new_row)
        return rows, data_files

    def createTemporaryTar(self, name, csv_data, data_files, tmpdir):
        """Write ``<tmpdir>/<name>.tar`` with ``index.csv`` and the data files."""
        index = os.path.join(tmpdir, "index.csv")
        with open(index, "w", newline="") as stream:
            csv.writer(stream).writerows(csv_data)
        tar_name = os.path.join(tmpdir, f"{name}.tar")
        with tarfile.open(tar_name, "w") as tar, self._bar(len(data_files), "Create TAR") as bar:
            tar.add(index, "index.csv")
            for member in sorted(data_files):
                tar.add(data_files[member], member)
                bar.update(1)
        return tar_name

    def convert(self, source, destination):
        """Make the tar of CSV dataset ``source`` at ``destination``; False if invalid."""
        with tempfile.TemporaryDirectory() as tmpdir:
            csv_data, data_files = self.createCsvData(source)
            if csv_data is None:
                return False
            name = os.path.splitext(os.path.basename(source))[0]
            tar_name = self.createTemporaryTar(name, csv_data, data_files, tmpdir)
            write_path_atomically(destination, lambda tmp: shutil.copyfile(tar_name, tmp))
        return True

    def _credentials(self, endpoint, token, name, size):
        query = urllib.parse.urlencode({"encrypted_text": token, "dataset_name": name,
                                        "dataset_size": size})
        url = f"{endpoint}/v1/misc/credential?{query}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return json.loads(response.read().decode())
        except (urllib.error.URLError, OSError) as error:
            raise ConnectionError(f"nnabla_cli upload: cannot reach {endpoint} ({error}); an "
                                  f"upload needs network access to Neural Network Console") \
                from None

    def uploadFile(self, endpoint, token, filename, name):
        """Upload tar ``filename`` as dataset ``name``; False if the server refuses."""
        info = self._credentials(endpoint, token, name, os.path.getsize(filename))
        if "upload_path" not in info:
            self._log(f"Server returns [{info.get('message', 'no upload path')}]")
            return False
        try:
            import boto3
            import boto3.s3.transfer
        except ImportError:
            raise ImportError("nnabla_cli upload needs boto3: pip install boto3") from None
        bucket, key = info["upload_path"].split("://", 1)[1].split("/", 1)
        session = boto3.session.Session(aws_access_key_id=info["access_key_id"],
                                        aws_secret_access_key=info["secret_access_key"],
                                        aws_session_token=info["session_token"])
        transfer = boto3.s3.transfer.S3Transfer(client=session.client("s3"))
        with self._bar(os.path.getsize(filename), "Upload") as bar:
            transfer.upload_file(filename, bucket, f"{key}/{name}.tar", callback=bar.update)
        return True

    def upload(self, token, filename, name, finishCallback=None, endpoint=None):
        """Upload a ``.tar`` or a ``.csv`` dataset (packed first); True on success."""
        endpoint = endpoint or DEFAULT_ENDPOINT
        ext = os.path.splitext(filename)[1]
        if ext == ".csv":
            with tempfile.TemporaryDirectory() as tmpdir:
                csv_data, data_files = self.createCsvData(filename)
                if csv_data is None:
                    return False
                tar_name = self.createTemporaryTar(name, csv_data, data_files, tmpdir)
                done = self.uploadFile(endpoint, token, tar_name, name)
        elif ext == ".tar":
            done = self.uploadFile(endpoint, token, filename, name)
        else:
            self._log(f"filename with extension {ext} is not supported.")
            done = False
        if done:
            self._log("Finished")
        if finishCallback is not None:
            finishCallback(done)
        return done


def upload_command(args):
    """Upload ``args.filename`` with ``args.token``."""
    endpoint = args.endpoint or os.getenv("NNC_ENDPOINT", DEFAULT_ENDPOINT)
    name = os.path.splitext(os.path.basename(args.filename))[0]
    return Uploader().upload(args.token, args.filename, name, endpoint=endpoint)


def create_tar_command(args):
    """Pack CSV dataset ``args.source`` into ``args.destination``."""
    return Uploader().convert(args.source, args.destination)


def add_upload_command(subparsers):
    """Register ``upload``."""
    p = subparsers.add_parser("upload", help="Upload dataset to Neural Network Console.")
    p.add_argument("-e", "--endpoint", help="set endpoint uri", type=str)
    p.add_argument("token", help="token for upload")
    p.add_argument("filename", help="filename to upload")
    p.set_defaults(func=upload_command)


def add_create_tar_command(subparsers):
    """Register ``create_tar``."""
    p = subparsers.add_parser("create_tar", help="Create tar file for Neural Network Console.")
    p.add_argument("source", help="CSV dataset")
    p.add_argument("destination", help="TAR filename")
    p.set_defaults(func=create_tar_command)
