"""``nnabla_cli create_object_detection_dataset``: a YOLO-style CSV dataset.

Each image under ``-i`` (any depth) has a label file ``<image>.txt`` with lines ``class x y
w h`` (centre and size relative to the image). ``-a`` anchor sizes are found by k-means of
the label sizes (seed 0, as nnabla). Each image is shaped (``-w``, ``-g``, ``-c``, ``-m``) and
saved as ``<outdir>/data/<image>.png``, with ``<image>_label.csv`` (per anchor and grid
cell: the class of the object whose centre falls in the cell, -1 if none) and
``<image>_region.csv`` (per anchor and cell: x and y offset in the cell, log width and log
height in cells). The CSV files list ``x:image,y:label,r:region``.
"""
from __future__ import annotations

import os

import numpy as np

from ._image_dataset import add_output_arguments, is_image, shape_image, write_split_csv
from .utility import logger, progress_bar


class ObjectRect:
    """A box as ``(left, top, right, bottom)`` (relative coordinates)."""

    def __init__(self, LRTB=None, XYWH=None):
        if LRTB is not None:
            self.rect = np.array(LRTB, dtype=float)
        elif XYWH is not None:
            x, y, w, h = XYWH
            self.rect = np.array([x - w * 0.5, y - h * 0.5, x + w * 0.5, y + h * 0.5])
        else:
            self.rect = np.zeros(4)

    def clip(self):
        return ObjectRect(LRTB=self.rect.clip(0.0, 1.0))

    def width(self):
        return max(self.rect[2] - self.rect[0], 0.0)

    def height(self):
        return max(self.rect[3] - self.rect[1], 0.0)

    def centerx(self):
        return (self.rect[0] + self.rect[2]) * 0.5

    def centery(self):
        return (self.rect[1] + self.rect[3]) * 0.5

    def area(self):
        return self.width() * self.height()

    def overlap(self, other):
        w = min(self.rect[2], other.rect[2]) - max(self.rect[0], other.rect[0])
        h = min(self.rect[3], other.rect[3]) - max(self.rect[1], other.rect[1])
        return max(w, 0.0) * max(h, 0.0)

    def iou(self, other):
        overlap = self.overlap(other)
        return overlap / (self.area() + other.area() - overlap)


def load_label(file_name):
    """The ``[class, x, y, w, h]`` lines of a label file (others are skipped)."""
    if not os.path.exists(file_name):
        logger.warning(f"Label txt file is not found {file_name}.")
        return []
    with open(file_name) as stream:
        values = [[float(s) for s in line.split()] for line in stream if line.strip()]
    return [v for v in values if len(v) == 5]


def get_anchors(source_dir, file_list, num_anchor):
    """``num_anchor`` (width, height) anchors: k-means of the label sizes, by area."""
    sizes = np.array([label[3:5] for f in file_list for label in
                      load_label(os.path.join(source_dir, os.path.splitext(f)[0] + ".txt"))])
    if len(sizes) < num_anchor:
        raise ValueError(f"create_object_detection_dataset: {len(sizes)} labels cannot make "
                         f"{num_anchor} anchors")
    logger.log(99, f"{len(sizes)} labels are found in {len(file_list)} images "
                   f"({len(sizes) / len(file_list):.2f} labels/image on average).")
    np.random.seed(0)
    classes = np.random.randint(num_anchor, size=len(sizes))
    for _ in range(1000):
        means = np.array([sizes[classes == i].mean(axis=0) for i in range(num_anchor)])
        distance = np.array([np.sum((sizes - m) ** 2, axis=1) for m in means])
        new_classes = distance.argmin(axis=0)
        if np.array_equal(classes, new_classes):
            break
        classes = new_classes
    return means[(means[:, 0] * means[:, 1]).argsort()]


def _warp(label, input_size, output_size, mode):
    w_scale, h_scale = input_size[0] / output_size[0], input_size[1] / output_size[1]
    label = list(label)
    if mode == "trimming":
        label[1] = (label[1] - (1.0 - 1.0 / w_scale) * 0.5) * w_scale
        label[2] = (label[2] - (1.0 - 1.0 / h_scale) * 0.5) * h_scale
    else:
        label[1] = label[1] * w_scale + (1.0 - w_scale) * 0.5
        label[2] = label[2] * h_scale + (1.0 - h_scale) * 0.5
    label[3] *= w_scale
    label[4] *= h_scale
    return label


def grid_targets(labels, anchors, width, height, grid_size):
    """``(label_array, region_array)`` of shapes (anchors, gh, gw) and (anchors, gh, gw, 4)."""
    grid_w, grid_h = width // grid_size, height // grid_size
    label_array = np.full((len(anchors), grid_h, grid_w), -1, dtype=int)
    region_array = np.zeros((len(anchors), grid_h, grid_w, 4))
    for label in labels:
        rect = ObjectRect(XYWH=label[1:]).clip()
        if rect.width() <= 0.0 or rect.height() <= 0.0:
            continue
        gx = min(int(rect.centerx() * grid_w), grid_w - 1)
        gy = min(int(rect.centery() * grid_h), grid_h - 1)
        boxes = [ObjectRect(XYWH=[(gx + 0.5) / grid_w, (gy + 0.5) / grid_h, a[0], a[1]])
                 for a in anchors]
        best = int(np.argmax([rect.iou(b) for b in boxes]))
        label_array[best, gy, gx] = int(label[0])
        region_array[best, gy, gx] = [(rect.centerx() - boxes[best].centerx()) * grid_w + 0.5,
                                      (rect.centery() - boxes[best].centery()) * grid_h + 0.5,
                                      np.log(rect.width() * grid_w),
                                      np.log(rect.height() * grid_h)]
    return label_array, region_array


def convert_image(file_name, args, anchors):
    """Shape one image and write its label and region files."""
    from ..image_utils import imread, imsave

    width, height = int(args.width), int(args.height)
    stem = os.path.splitext(file_name)[0]
    labels = load_label(os.path.join(args.sourcedir, stem + ".txt"))
    im = imread(os.path.join(args.sourcedir, file_name))
    input_size = (im.shape[1], im.shape[0])
    im = shape_image(im, width, height, args.mode, int(args.channel))
    if input_size != (width, height):
        labels = [_warp(label, input_size, (width, height), args.mode) for label in labels]
    base = os.path.join(args.outdir, "data", stem)
    os.makedirs(os.path.dirname(base), exist_ok=True)
    imsave(base + ".png", im)
    label_array, region_array = grid_targets(labels, anchors, width, height,
                                             int(args.grid_size))
    np.savetxt(base + "_label.csv", label_array.reshape(-1, label_array.shape[-1]),
               fmt="%i", delimiter=",")
    np.savetxt(base + "_region.csv", region_array.reshape(
        region_array.shape[0] * region_array.shape[1], -1), fmt="%f", delimiter=",")


def _file_list(source_dir, folder=""):
    found = []
    for item in sorted(os.listdir(os.path.join(source_dir, folder))):
        if os.path.isdir(os.path.join(source_dir, folder, item)):
            found += _file_list(source_dir, os.path.join(folder, item))
        elif is_image(item):
            found.append(os.path.join(folder, item))
    return found


def create_object_detection_dataset_command(args):
    """Create the dataset (see the module docstring)."""
    grid_size = int(args.grid_size)
    if int(args.width) % grid_size or int(args.height) % grid_size:
        logger.log(99, "width and height must be divisible by grid_size.")
        return False
    if os.path.abspath(args.sourcedir) == os.path.abspath(args.outdir):
        logger.critical("Input directory and output directory are same.")
        return False
    logger.log(99, "Creating file list...")
    files = _file_list(args.sourcedir)
    if not files:
        logger.critical("No image file found in the subdirectory of the input directory.")
        return False
    logger.log(99, "Calculating anchors...")
    anchors = get_anchors(args.sourcedir, files, int(args.num_anchor))
    logger.log(99, "Creating output images...")
    with progress_bar(len(files), "Convert") as bar:
        for f in files:
            convert_image(f, args, anchors)
            bar.update(1)
    rows = [[os.path.join(".", "data", stem + ".png"), os.path.join(".", "data", stem +
                                                                      "_label.csv"),
             os.path.join(".", "data", stem + "_region.csv")]
            for stem in (os.path.splitext(f)[0] for f in files)]
    logger.log(99, "Creating CSV files...")
    write_split_csv(args, rows, ["x:image", "y:label", "r:region"])
    logger.log(99, "Dataset was successfully created.")
    return True


def add_create_object_detection_dataset_command(subparsers):
    """Register ``create_object_detection_dataset``."""
    p = subparsers.add_parser("create_object_detection_dataset",
                              help="Create dataset from image and label files.")
    p.add_argument("-i", "--sourcedir", required=True,
                   help="source directory with souce image and label files")
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.add_argument("-n", "--num_class", help="number of object classes", required=True)
    p.add_argument("-c", "--channel", help="number of output color channels", required=True)
    p.add_argument("-w", "--width", help="width of output image", required=True)
    p.add_argument("-g", "--height", help="height of output image", required=True)
    p.add_argument("-a", "--num_anchor", help="number of anchor", required=True)
    p.add_argument("-d", "--grid_size", help="width and height of detection grid",
                   required=True)
    add_output_arguments(p)
    p.set_defaults(func=create_object_detection_dataset_command)
