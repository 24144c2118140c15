"""``nnabla.config``: settings read from ``nnabla.conf`` files.

Search order (later files override earlier ones): the package's defaults, the
system-wide ``/etc/nnabla.conf``, the user's ``~/.nnabla``, and ``nnabla.conf``
in the current directory.
"""
from __future__ import annotations

import configparser
import os

DEFAULTS = {
    "LOG": {"log_console_level": "INFO", "log_file_level": "INFO", "log_file_name": ""},
    "MISC": {"misc_show_progress": "True"},
    "DATA_ITERATOR": {"cache_file_format": ".npy",
                      "data_source_file_cache_num_of_threads": "10",
                      "cache_file_cache_num_of_threads": "4",
                      "data_source_file_cache_size": "100",
                      "data_source_file_cache_location": "",
                      "data_source_buffer_max_size": "1073741824"},
    "CHECKPOINT": {"optimizer_interval": "5"},
}


def search_paths():
    return ["/etc/nnabla.conf", os.path.join(os.path.expanduser("~"), ".nnabla"),
            os.path.join(os.getcwd(), "nnabla.conf")]


def load():
    parser = configparser.ConfigParser()
    parser.read_dict(DEFAULTS)
    parser.read([p for p in search_paths() if os.path.isfile(p)])
    return parser


nnabla_config = load()
