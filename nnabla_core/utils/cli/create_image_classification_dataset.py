"""``nnabla_cli create_image_classification_dataset``: a CSV dataset from image folders.

Each subfolder of ``-i`` is a class (sorted by name; label = index among the folders that
hold images). Every image is shaped (``-w``, ``-g``, ``-c``, ``-m trimming|padding``) and
saved as PNG under ``-o`` at the same relative path; the CSV files ``-f1`` (and ``-f2`` with
``-r2`` percent of the images) have the header ``x:image,y:label`` and rows
``./<class>/<file>.png,<label>``.
"""
from __future__ import annotations

import os

from ._image_dataset import add_output_arguments, is_image, shape_image, write_split_csv
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
    write_split_csv(args, kept, ["x:image", "y:label"])
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
    add_output_arguments(p)
    p.set_defaults(func=create_image_classification_dataset_command)
