"""The evaluation loop of the framework (``nnabla.experimental.framework.evaluator``)."""
from __future__ import annotations

from . import _checks

__all__ = ["Evaluator"]


def _nothing(e):
    return True


class Evaluator:
    """Runs one evaluation, :meth:`evaluate`, by calling the callbacks it was given.

    The graphs and the metrics are not held here: the callbacks (usually methods of a
    :class:`~nnabla.experimental.framework.worker.Worker`) own them, and accumulate and
    report the metrics themselves. One evaluation at epoch ``e`` is::

        for callback in eval_callback_on_start: callback(e)
        for vi in range(val_iter):
            eval_data_feeder(e, vi)
            eval_graph_forward(e, vi)
        for callback in eval_callback_on_finish: callback(e)

    Args:
        eval_data_feeder (callable): ``(e, vi)``, fills the evaluation inputs.
        eval_graph_forward (callable): ``(e, vi)``, runs the evaluation graphs forward.
        eval_callback_on_start (callable or list, optional): ``(e)``, before the loop.
        eval_callback_on_finish (callable or list, optional): ``(e)``, after the loop.
        val_iter (int): batches per evaluation (>= 0).

    Raises:
        TypeError: a callback is not callable, or ``val_iter`` is not an int.
        ValueError: ``val_iter < 0``.

    Example:
        >>> import numpy as np
        >>> from nnabla.experimental.framework.evaluator import Evaluator
        >>> batches, metric = np.arange(6.0).reshape(3, 2), {}
        >>> def reset(e): metric["sum"] = 0.0
        >>> def forward(e, vi): metric["sum"] += batches[vi].mean()
        >>> def report(e): metric[e] = float(metric["sum"]) / 3
        >>> evaluator = Evaluator(eval_data_feeder=lambda e, vi: None,
        ...                       eval_graph_forward=forward, eval_callback_on_start=reset,
        ...                       eval_callback_on_finish=[report], val_iter=3)
        >>> evaluator.evaluate(0)
        >>> metric[0]
        2.5
    """

    def _force_to_list(self, x):
        """Return ``x`` as a list of callbacks (one callable becomes a one-element list)."""
        return _checks.callback_list("Evaluator", "callbacks", x)

    def __init__(self,
                 eval_data_feeder,
                 eval_graph_forward,
                 eval_callback_on_start=_nothing,
                 eval_callback_on_finish=_nothing,
                 val_iter=1):
        self.eval_data_feeder = _checks.callback(
            "Evaluator", "eval_data_feeder", eval_data_feeder)
        self.eval_graph_forward = _checks.callback(
            "Evaluator", "eval_graph_forward", eval_graph_forward)
        self.eval_callback_on_start = _checks.callback_list(
            "Evaluator", "eval_callback_on_start", eval_callback_on_start)
        self.eval_callback_on_finish = _checks.callback_list(
            "Evaluator", "eval_callback_on_finish", eval_callback_on_finish)
        self.val_iter = _checks.count("Evaluator", "val_iter", val_iter, minimum=0)

    def evaluate(self, e):
        """Run one evaluation at epoch ``e`` (see the class docstring for the calls).

        Args:
            e (int): the epoch, passed to every callback.
        """
        for callback in self.eval_callback_on_start:
            callback(e)
        for vi in range(self.val_iter):
            self.eval_data_feeder(e, vi)
            self.eval_graph_forward(e, vi)
        for callback in self.eval_callback_on_finish:
            callback(e)
