"""Train the tutorial CNN on scikit-learn's 8x8 hand-written digits.

The network is the small LeNet-like CNN of nnabla's "NNabla by Examples" tutorial
(two convolution + batch-normalization + tanh blocks, average pooling, two affine
layers). The data set ships inside scikit-learn, so nothing is downloaded. The script
uses only nnabla's public API, so it runs unchanged on nnabla itself.

Usage::

    python examples/train_digits.py --out digits_params.h5

It prints the training loss of every epoch and the accuracy on a held-out split, and
saves the learned parameters to ``--out`` (HDF5). Exits with status 1 when the held-out
accuracy is below ``--min-accuracy``.
"""
import argparse
import sys
import time

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from nnabla.utils.data_iterator import data_iterator_simple
from sklearn.datasets import load_digits
from tqdm import tqdm


def cnn(x, test=False):
    """The tutorial CNN: (B, 1, 8, 8) images to (B, 10) class scores."""
    with nn.parameter_scope("cnn"):
        with nn.parameter_scope("conv1"):
            c1 = F.tanh(PF.batch_normalization(
                PF.convolution(x, 4, (3, 3), pad=(1, 1), stride=(2, 2)), batch_stat=not test))
        with nn.parameter_scope("conv2"):
            c2 = F.tanh(PF.batch_normalization(
                PF.convolution(c1, 8, (3, 3), pad=(1, 1)), batch_stat=not test))
            c2 = F.average_pooling(c2, (2, 2))
        with nn.parameter_scope("fc3"):
            fc3 = F.tanh(PF.affine(c2, 32))
        with nn.parameter_scope("classifier"):
            y = PF.affine(fc3, 10)
    return y


def split_digits(test_fraction, seed):
    """Scaled images (N, 1, 8, 8) in [0, 1] and labels (N, 1), split into train and test."""
    digits = load_digits(n_class=10)
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int32)[:, None]
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = round(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (images[train], labels[train]), (images[test], labels[test])


def train(args):
    """Train, evaluate and save; returns the held-out accuracy."""
    np.random.seed(args.seed)
    nn.seed(args.seed)
    nn.clear_parameters()
    (train_x, train_t), (test_x, test_t) = split_digits(args.test_fraction, args.seed)
    data = data_iterator_simple(lambda i: (train_x[i], train_t[i]), len(train_t),
                                args.batch_size, shuffle=True,
                                rng=np.random.RandomState(args.seed))

    x = nn.Variable((args.batch_size, 1, 8, 8))
    t = nn.Variable((args.batch_size, 1))
    loss = F.mean(F.softmax_cross_entropy(cnn(x), t))
    solver = S.Adam(alpha=args.learning_rate)
    solver.set_parameters(nn.get_parameters())

    iters_per_epoch = -(-data.size // args.batch_size)
    bar = tqdm(total=args.epochs * iters_per_epoch, unit="iter", disable=args.no_progress)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        # Step decay: a tenth of the rate for the last half, a hundredth for the last quarter.
        solver.set_learning_rate(args.learning_rate * 0.1 ** (
            (epoch >= args.epochs // 2) + (epoch >= 3 * args.epochs // 4)))
        losses = []
        for _ in range(iters_per_epoch):
            x.d, t.d = data.next()
            loss.forward(clear_no_need_grad=True)
            solver.zero_grad()
            loss.backward(clear_buffer=True)
            solver.weight_decay(args.weight_decay)
            solver.update()
            losses.append(float(loss.d))
            bar.set_postfix(epoch=epoch + 1, loss=f"{losses[-1]:.4f}", refresh=False)
            bar.update()
        bar.write(f"epoch {epoch + 1:3d}  train loss {np.mean(losses):.4f}")
    bar.close()
    elapsed = time.perf_counter() - start

    accuracy = evaluate(test_x, test_t)
    print(f"held-out accuracy {accuracy * 100:.2f}% on {len(test_t)} images "
          f"(training took {elapsed:.1f} s, {elapsed / (args.epochs * iters_per_epoch) * 1e3:.2f}"
          f" ms/iter)")
    nn.save_parameters(args.out)
    print(f"saved parameters to {args.out}")
    return accuracy


def evaluate(images, labels):
    """Accuracy of the current parameters with batch-norm running statistics."""
    x = nn.Variable(images.shape)
    y = cnn(x, test=True)
    x.d = images
    y.forward(clear_buffer=True)
    return float(np.mean(y.d.argmax(axis=1) == labels.ravel()))


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="digits_params.h5", help="parameter file (.h5)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=3e-2,
                        help="initial Adam alpha (step decay at 1/2 and 3/4 of the epochs)")
    parser.add_argument("--weight-decay", type=float, default=1e-5)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=313)
    parser.add_argument("--min-accuracy", type=float, default=0.95)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser.parse_args(argv)


def main(argv=None):
    """Entry point; returns the process exit status."""
    args = parse_args(argv)
    accuracy = train(args)
    if accuracy < args.min_accuracy:
        print(f"accuracy {accuracy:.4f} is below the required {args.min_accuracy}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
