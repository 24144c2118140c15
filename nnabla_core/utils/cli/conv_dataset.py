"""``nnabla_cli conv_dataset``: convert a CSV dataset (or a cache) into a cache directory.

A ``.csv`` source is written by :class:`nnabla.utils.create_cache.CreateCache` (the cache
layout of nnabla: ``cache_index.csv``, ``cache_info.csv``, ``order.csv``, ``original.csv`` and
the ``cache_<first>_<last>.npy`` files); a ``.cache`` source is copied through
:class:`nnabla.utils.data_source.DataSourceWithFileCache`. The destination must end with
``.cache``.
"""
from __future__ import annotations

import os
import shutil

from ..create_cache import CreateCache
from ..data_source import DataSourceWithFileCache
from ..data_source_implements import CacheDataSource
from .utility import progress_bar


def _convert(args, source):
    """Write ``source`` (a data source) into the cache ``args.destination``."""
    with DataSourceWithFileCache(source, cache_dir=args.destination,
                                 shuffle=args.shuffle) as ds:
        print(f"Number of Data: {ds.size}")
        print(f"Shuffle:        {args.shuffle}")
        print(f"Normalize:      {args.normalize}")
        with progress_bar(ds.size, "Convert") as bar:
            for i in range(ds.size):
                ds._get_data(i)
                bar.update(1)


def _prepare_destination(args):
    if not os.path.exists(args.destination):
        os.mkdir(args.destination)
        return True
    if not args.force:
        print(f"File or directory [{args.destination}] is exists use `-F` option to "
              f"overwrite it.")
        return False
    if not os.path.isdir(args.destination):
        print(f"Cannot overwrite file [{args.destination}] please delete it.")
        return False
    print(f"Overwrite destination [{args.destination}].")
    shutil.rmtree(args.destination, ignore_errors=True)
    os.mkdir(args.destination)
    return True


def conv_dataset_command(args):
    """Convert ``args.source`` (``.csv`` or ``.cache``) into ``args.destination``."""
    if isinstance(args.num_of_threads, int) and args.num_of_threads <= 0:
        print(f"The numbers of threads [{args.num_of_threads}] must be positive integer.")
        return False
    ext = os.path.splitext(args.source)[1].lower()
    if ext not in (".csv", ".cache"):
        print("Command `conv_dataset` only supports CSV or CACHE as source.")
        return False
    if os.path.splitext(args.destination)[1].lower() != ".cache":
        print("Command `conv_dataset` only supports CACHE as destination.")
        return False
    if not os.path.exists(args.source):
        raise FileNotFoundError(f"nnabla_cli conv_dataset: source {args.source!r} does not "
                                f"exist")
    if not _prepare_destination(args):
        return False
    if ext == ".csv":
        cache = CreateCache(args.source, shuffle=args.shuffle,
                            num_of_threads=args.num_of_threads)
        print(f"Number of Data: {cache._size}")
        print(f"Shuffle:        {cache._shuffle}")
        print(f"Normalize:      {args.normalize}")
        cache.create(args.destination, normalize=args.normalize)
    else:
        with CacheDataSource(args.source, shuffle=args.shuffle,
                             normalize=args.normalize) as source:
            _convert(args, source)
    return True


def add_conv_dataset_command(subparsers):
    """Register ``conv_dataset``."""
    p = subparsers.add_parser("conv_dataset", help="Convert CSV dataset to cache.")
    p.add_argument("-F", "--force", action="store_true", help="force overwrite destination",
                   required=False)
    p.add_argument("-S", "--shuffle", action="store_true", help="shuffle data", required=False)
    p.add_argument("-N", "--normalize", action="store_true", help="normalize data range",
                   required=False)
    p.add_argument("-t", "--num_of_threads", type=int, required=False,
                   help="use multithreading to convert cache, default to 10")
    p.add_argument("source")
    p.add_argument("destination")
    p.set_defaults(func=conv_dataset_command)
