"""Image shaping shared by ``create_image_classification_dataset`` and
``create_object_detection_dataset``: crop (``trimming``) or pad (``padding``) to the target
aspect ratio, resize, convert to 1 or 3 channels, and split the file list into the CSV files."""
from __future__ import annotations

import csv
import os
import random
import re

import numpy as np

from ..._atomic import write_atomically

IMAGE_PATTERN = re.compile(r"\.(bmp|jpg|jpeg|png|gif|tif|tiff)", re.IGNORECASE)


def is_image(name):
    """Whether ``name`` has an image extension."""
    return bool(IMAGE_PATTERN.search(os.path.splitext(name)[1]))


def _trim(im, width, height):
    h, w = im.shape[:2]
    if h / w > height / width:
        target_h = int(w / width * height)
        return im[(h - target_h) // 2:h - (h - target_h) // 2]
    target_w = int(h / height * width)
    return im[:, (w - target_w) // 2:w - (w - target_w) // 2]


def _pad(im, width, height):
    h, w = im.shape[:2]
    if h / w < height / width:
        target_h = int(height / width * w)
        pad = (((target_h - h) // 2, target_h - (target_h - h) // 2 - h), (0, 0))
    else:
        target_w = int(width / height * h)
        pad = ((0, 0), ((target_w - w) // 2, target_w - (target_w - w) // 2 - w))
    return np.pad(im, pad + ((0, 0),) * (im.ndim - 2), "constant")


def shape_image(im, width, height, mode, channels):
    """The image cropped or padded (``mode``), resized to ``width x height`` and converted
    to ``channels`` (1: luminance 0.299 R + 0.587 G + 0.114 B; 3: grey replicated).

    Raises:
        ValueError: for an image that is neither grey nor RGB, or an unknown mode.
    """
    from ..image_utils import imresize

    if im.ndim not in (2, 3) or (im.ndim == 3 and im.shape[2] != 3):
        raise ValueError(f"the image must be RGB or monochrome; its shape is {im.shape}")
    if mode not in ("trimming", "padding"):
        raise ValueError(f"shaping mode must be 'trimming' or 'padding'; given {mode!r}")
    h, w = im.shape[:2]
    if (w, h) != (width, height):
        im = _trim(im, width, height) if mode == "trimming" else _pad(im, width, height)
        im = imresize(im, size=(width, height))
    if im.ndim == 2 and channels == 3:
        im = np.stack([im, im, im], axis=2)
    elif im.ndim == 3 and channels == 1:
        im = np.dot(im[..., :3], [0.299, 0.587, 0.114]).astype(np.uint8)
    return im


def split_rows(rows, shuffle, ratio2):
    """``[rows of file 1, rows of file 2]``: file 2 gets ``ratio2`` percent (rounded down
    for file 1), after an optional shuffle."""
    rows = list(rows)
    if shuffle:
        random.shuffle(rows)
    first = len(rows) * (100 - ratio2) // 100
    return [rows[:first], rows[first:]]


def write_csv(path, header, rows):
    """Write a CSV dataset file (atomically)."""
    def write(stream):
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    write_atomically(path, write, "w", newline="")


def write_split_csv(args, rows, header):
    """Write ``rows`` as the command's CSV files: ``args.file1`` and, when given,
    ``args.file2`` with ``args.ratio2`` percent of them (shuffled when ``args.shuffle`` is
    'true'), into ``args.outdir``."""
    names = [args.file1] + ([args.file2] if args.file2 else [])
    parts = split_rows(rows, args.shuffle == "true", int(args.ratio2) if args.ratio2 else 0)
    for name, part in zip(names, parts):
        if part:
            write_csv(os.path.join(args.outdir, name), header, part)


def add_output_arguments(p):
    """The options both dataset-creation commands share after their own (nnabla's order):
    shaping mode, shuffle, and the two output files with their ratios."""
    p.add_argument("-m", "--mode", help="shaping mode (trimming or padding)", required=True)
    p.add_argument("-s", "--shuffle", help="shuffle mode (true or false)", required=True)
    p.add_argument("-f1", "--file1", help="output file name 1", required=True)
    p.add_argument("-r1", "--ratio1", help="output file ratio(%%) 1")
    p.add_argument("-f2", "--file2", help="output file name 2")
    p.add_argument("-r2", "--ratio2", help="output file ratio(%%) 2")
