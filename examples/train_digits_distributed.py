"""Train the digits CNN of ``train_digits.py`` data-parallel over several processes.

Every process builds the same network with the same initial parameters, reads the same
shuffled global batch and trains on its own slice of it. The gradients are all-reduced
(averaged) while backward runs (``all_reduce_callback``), and batch normalization uses the
statistics of the whole global batch (``PF.sync_batch_normalization``), so every process
ends each step with the parameters one process has after a step on the whole global batch,
and all processes hold the same parameters.

Usage::

    mpiexec -n 2 python examples/train_digits_distributed.py --out digits_params.h5
    python examples/train_digits_distributed.py --single-process   # the same training in
                                                                   # one process (reference)

(as root, Open MPI's launcher needs ``--allow-run-as-root``; more processes than cores
``--oversubscribe``). ``--batch-size`` is the global batch (split evenly between the
processes). Rank 0 prints the losses, the held-out accuracy and the time per step and saves
the parameters to ``--out``; ``--out-per-rank`` saves every rank's parameters
(``<out stem>.rank<r>.h5``). Exits with status 1 when the accuracy is below
``--min-accuracy`` or when the ranks' parameters differ.
"""
import argparse
import os
import sys
import time

import nnabla as nn
import nnabla.communicators as C
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from nnabla.ext_utils import get_extension_context
from nnabla.utils.data_iterator import data_iterator_simple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_digits  # noqa: E402  (the single-process example next to this file)


def cnn(x, comm, test=False):
    """``train_digits.cnn`` with batch statistics synchronised over ``comm`` (the same
    parameters, under the same names); plain ``train_digits.cnn`` when ``comm`` is None."""
    if comm is None:
        return train_digits.cnn(x, test)

    def bn(h):
        return PF.sync_batch_normalization(h, comm, batch_stat=not test)

    with nn.parameter_scope("cnn"):
        with nn.parameter_scope("conv1"):
            c1 = F.tanh(bn(PF.convolution(x, 4, (3, 3), pad=(1, 1), stride=(2, 2))))
        with nn.parameter_scope("conv2"):
            c2 = F.tanh(bn(PF.convolution(c1, 8, (3, 3), pad=(1, 1))))
            c2 = F.average_pooling(c2, (2, 2))
        with nn.parameter_scope("fc3"):
            fc3 = F.tanh(PF.affine(c2, 32))
        with nn.parameter_scope("classifier"):
            y = PF.affine(fc3, 10)
    return y


def communicator(single_process):
    """The MPI communicator (a job of one process without mpiexec), or None."""
    if single_process:
        return None
    comm = C.MultiProcessCommunicator(get_extension_context("cpu"))
    comm.init()
    return comm


def train(args, comm):
    """Train; returns (held-out accuracy, seconds per step)."""
    rank, size = (comm.rank, comm.size) if comm else (0, 1)
    if args.batch_size % size:
        raise ValueError(f"--batch-size {args.batch_size} is not divisible by the number of "
                         f"processes ({size})")
    np.random.seed(args.seed)
    nn.seed(args.seed)                     # the same initial parameters on every rank
    nn.clear_parameters()
    (train_x, train_t), (test_x, test_t) = train_digits.split_digits(args.test_fraction,
                                                                     args.seed)
    # Every rank draws the same global batches; each keeps its own slice.
    data = data_iterator_simple(lambda i: (train_x[i], train_t[i]), len(train_t),
                                args.batch_size, shuffle=True,
                                rng=np.random.RandomState(args.seed))
    local = args.batch_size // size
    mine = slice(rank * local, (rank + 1) * local)
    x = nn.Variable((local, 1, 8, 8))
    t = nn.Variable((local, 1))
    loss = F.mean(F.softmax_cross_entropy(cnn(x, comm), t))
    solver = S.Adam(alpha=args.learning_rate) if args.solver == "adam" else \
        S.Momentum(lr=args.learning_rate, momentum=0.9)
    solver.set_parameters(nn.get_parameters())
    grads = [p.grad for p in nn.get_parameters().values()]

    iters_per_epoch = -(-data.size // args.batch_size)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        solver.set_learning_rate(args.learning_rate * 0.1 ** (
            (epoch >= args.epochs // 2) + (epoch >= 3 * args.epochs // 4)))
        losses = []
        for _ in range(iters_per_epoch):
            images, labels = data.next()
            x.d, t.d = images[mine], labels[mine]
            loss.forward(clear_no_need_grad=True)
            solver.zero_grad()
            callback = None if comm is None else comm.all_reduce_callback(
                grads, args.pack_size, division=True)
            loss.backward(clear_buffer=True, communicator_callbacks=callback)
            solver.weight_decay(args.weight_decay)
            solver.update()
            losses.append(float(loss.d))
        if rank == 0:
            print(f"epoch {epoch + 1:3d}  train loss (rank 0's slice) {np.mean(losses):.4f}",
                  flush=True)
    if comm is not None:
        comm.barrier()
    step_time = (time.perf_counter() - start) / max(args.epochs * iters_per_epoch, 1)
    return train_digits.evaluate(test_x, test_t), step_time


def ranks_agree(comm):
    """Whether every rank holds bit-identical parameters (gathered from all ranks)."""
    if comm is None or comm.size == 1:
        return True
    flat = np.concatenate([p.d.reshape(-1) for p in nn.get_parameters().values()])
    every = [nn.NdArray(flat.shape) for _ in range(comm.size)]
    comm.all_gather(nn.NdArray.from_numpy_array(flat), every)
    return all(np.array_equal(other.data, flat) for other in every)


def parse_args(argv=None):
    """Command-line options (those of ``train_digits.py`` plus the distributed ones)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="digits_params.h5", help="parameter file (.h5)")
    parser.add_argument("--out-per-rank", action="store_true",
                        help="every rank saves its parameters to <out stem>.rank<r>.h5")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64, help="global batch size")
    parser.add_argument("--learning-rate", type=float, default=3e-2)
    parser.add_argument("--solver", choices=("adam", "momentum"), default="adam",
                        help="adam as train_digits.py; momentum (0.9) keeps the ranks' "
                        "rounding differences from growing (see docs/distributed.md)")
    parser.add_argument("--weight-decay", type=float, default=1e-5)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=313)
    parser.add_argument("--pack-size", type=int, default=2 << 20,
                        help="values per all-reduce message during backward")
    parser.add_argument("--min-accuracy", type=float, default=0.95)
    parser.add_argument("--single-process", action="store_true",
                        help="no communicator: train_digits.py's network on the global batch")
    return parser.parse_args(argv)


def main(argv=None):
    """Entry point; returns the process exit status."""
    args = parse_args(argv)
    comm = communicator(args.single_process)
    rank, size = (comm.rank, comm.size) if comm else (0, 1)
    accuracy, step_time = train(args, comm)
    agree = ranks_agree(comm)
    stem, ext = os.path.splitext(args.out)
    if args.out_per_rank:
        nn.save_parameters(f"{stem}.rank{rank}{ext or '.h5'}")
    elif rank == 0:
        nn.save_parameters(args.out)
    if rank == 0:
        print(f"{size} process(es): held-out accuracy {accuracy * 100:.2f}%, "
              f"{step_time * 1e3:.2f} ms/step; parameters identical on all ranks: {agree}",
              flush=True)
    if not agree:
        return 1
    if accuracy < args.min_accuracy:
        print(f"rank {rank}: accuracy {accuracy:.4f} is below the required "
              f"{args.min_accuracy}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
