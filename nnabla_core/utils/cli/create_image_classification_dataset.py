"""``nnabla_cli create_image_classification_dataset``: a CSV dataset from image folders.

Each subfolder of ``-i`` is a class (sorted by name; label = index among the folders that
hold images). Every image is shaped (``-w``, ``-g``, ``-c``, ``-m trimming|padding``) and
saved as PNG under ``-o`` at the same relative path; the CSV files ``-f1`` (and ``-f2`` with
``-r2`` percent of the images) have the header ``x:image,y:label`` and rows
``./<class>/<file>.png,<label>``.
"""
from __future__ import annotations

import os

from ._image_dataset import is_image, shape_image, split_rows, write_csv
from .utility import logger, progress_bar


def convert_image(file_name, source_dir, dest_dir, width, height, mode, channels):
    """Shape one image into ``dest_dir`` as PNG; False (with a warning) when it fails."""
    from ..image_utils import imread, imsave

    source = os.path.join(source_dir, file_name)
    target = os.path.join(dest_dir, os.path.splitext(file_name)[0] + ".png")
    try:
        im = shape_image(imread(source), width, height, mode, channels)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        imsave(target, im)
    except Exception as error:
        logger.warning(f"Failed to convert {source}: {error}")
        return False
    return True


def _file_list(source_dir):
    rows, labels = [], []
    folders = sorted(d for d in os.listdir(source_dir)
                     if os.path.isdir(os.path.join(source_dir, d)))
    for folder in folders:
        files = sorted(f for f in os.listdir(os.path.join(source_dir, folder))
                       if os.path.isfile(os.path.join(source_dir, folder, f)) and is_image(f))
        if files:
            labels.append(folder)
            rows += [[os.path.join(".", folder, f), len(labels) - 1] for f in files]
    return folders, rows


def create_image_classification_dataset_command(args):
    """Create the dataset (see the module docstring)."""
    width, height, channels = int(args.width), int(args.height), int(args.channel)
    if os.path.abspath(args.sourcedir) == os.path.abspath(args.outdir):
        logger.critical("Input directory and output directory are same.")
        return False
    logger.log(99, "Creating file list...")
    folders, rows = _file_list(args.sourcedir)
    if not folders:
        logger.critical("Subdirectory not found in the input directory.")
        return False
    if not rows:
        logger.critical("No image file found in the subdirectory of the input directory.")
        return False
    logger.log(99, "Creating output images...")
    kept = []
    with progress_bar(len(rows), "Convert") as bar:
        for row in rows:
            if convert_image(row[0], args.sourcedir, args.outdir, width, height, args.mode,
                             channels):
                kept.append([os.path.splitext(row[0])[0] + ".png", row[1]])
            bar.update(1)
    logger.log(99, "Creating CSV files...")
    names = [args.file1] + ([args.file2] if args.file2 else [])
    parts = split_rows(kept, args.shuffle == "true", int(args.ratio2) if args.ratio2 else 0)
    for name, part in zip(names, parts):
        if part:
            write_csv(os.path.join(args.outdir, name), ["x:image", "y:label"], part)
    logger.log(99, "Dataset was successfully created.")
    return True


def add_create_image_classification_dataset_command(subparsers):
    """Register ``create_image_classification_dataset``."""
    p = subparsers.add_parser("create_image_classification_dataset",
                              help="Create dataset from image files.")
    p.add_argument("-i", "--sourcedir", required=True,
                   help="source directory with directories for each class")
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.add_argument("-c", "--channel", help="number of output color channels", required=True)
    p.add_argument("-w", "--width", help="width of output image", required=True)
    p.add_argument("-g", "--height", help="height of output image", required=True)
    p.add_argument("-m", "--mode", help="shaping mode (trimming or padding)", required=True)
    p.add_argument("-s", "--shuffle", help="shuffle mode (true or false)", required=True)
    p.add_argument("-f1", "--file1", help="output file name 1", required=True)
    p.add_argument("-r1", "--ratio1", help="output file ratio(%%) 1")
    p.add_argument("-f2", "--file2", help="output file name 2")
    p.add_argument("-r2", "--ratio2", help="output file ratio(%%) 2")
    p.set_defaults(func=create_image_classification_dataset_command)
