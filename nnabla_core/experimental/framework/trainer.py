"""The framework's training loop (``nnabla.experimental.framework.trainer``)."""
from __future__ import annotations

import numbers

__all__ = ["Trainer"]

# What the loop calls on its worker; a worker need not derive from Worker (duck typing).
_WORKER_METHODS = (
    "load_checkpoint", "training_prepare", "save_model_at_start", "max_epoch",
    "epoch_loop_start", "evaluate_at_epoch_start", "iter_per_epoch", "iter_loop_start",
    "update_in_iteration", "iter_loop_end", "epoch_loop_end", "save_checkpoint_at_epoch_end",
    "evaluate_at_training_end", "save_model_at_end", "training_complete", "brief",
)


class Trainer:
    """Drives a :class:`~nnabla.experimental.framework.worker.Worker` through training.

    The loop is the same for every model; what it does at each step is the worker's::

        start = worker.load_checkpoint()
        worker.training_prepare(); worker.save_model_at_start()
        for e in range(start, start + worker.max_epoch()):
            worker.epoch_loop_start(e); worker.evaluate_at_epoch_start(e)
            for i in range(worker.iter_per_epoch()):
                worker.iter_loop_start(i, e)
                worker.update_in_iteration(i, e)
                worker.iter_loop_end(i, e)
            worker.epoch_loop_end(e); worker.save_checkpoint_at_epoch_end(e)
        worker.evaluate_at_training_end(); worker.save_model_at_end()
        worker.training_complete()

    Args:
        worker (Worker): the worker; any object with the methods above will do.

    Raises:
        TypeError: ``worker`` lacks one of the methods the loop calls.

    Example:
        >>> from nnabla.experimental.framework import Trainer
        >>> class Counting:
        ...     def __getattr__(self, name):      # every step is a no-op ...
        ...         return lambda *args: None
        ...     def load_checkpoint(self): return 0
        ...     def max_epoch(self): return 2
        ...     def iter_per_epoch(self): return 3
        ...     steps = 0
        ...     def update_in_iteration(self, i, e): self.steps += 1   # ... but the update
        ...     def brief(self): return self.steps
        >>> trainer = Trainer(Counting())
        >>> trainer.train()
        >>> trainer.brief()
        6
    """

    def __init__(self, worker):
        missing = [name for name in _WORKER_METHODS if not callable(getattr(worker, name, None))]
        if missing:
            raise TypeError("Trainer: argument 'worker' must be a "
                            "nnabla.experimental.framework.Worker (or have its methods); "
                            f"given {type(worker).__name__}, which lacks "
                            + ", ".join(missing))
        self.worker = worker
        self.start_epoch = 0

    def train(self):
        """Run the whole training (see the class docstring for the calls).

        Raises:
            TypeError, ValueError: ``load_checkpoint`` does not return an int >= 0, or
                ``max_epoch`` / ``iter_per_epoch`` do not return ints >= 0.
        """
        worker = self.worker
        self.start_epoch = _checked(worker, "load_checkpoint")
        worker.training_prepare()
        worker.save_model_at_start()
        for e in range(self.start_epoch, self.start_epoch + _checked(worker, "max_epoch")):
            worker.epoch_loop_start(e)
            worker.evaluate_at_epoch_start(e)
            for i in range(_checked(worker, "iter_per_epoch")):
                worker.iter_loop_start(i, e)
                worker.update_in_iteration(i, e)
                worker.iter_loop_end(i, e)
            worker.epoch_loop_end(e)
            worker.save_checkpoint_at_epoch_end(e)
        worker.evaluate_at_training_end()
        worker.save_model_at_end()
        worker.training_complete()

    def brief(self):
        """Return the worker's summary of the training (``worker.brief()``)."""
        return self.worker.brief()


def _checked(worker, method):
    """Call a worker method that must return a count (>= 0), and check what it returned."""
    value = getattr(worker, method)()
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if is_int and value >= 0:
        return int(value)
    raise (ValueError if is_int else TypeError)(
        f"Trainer.train: {type(worker).__name__}.{method}() must return an int >= 0 "
        f"(an epoch or iteration count); returned {type(value).__name__} {value!r}")
