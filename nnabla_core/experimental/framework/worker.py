"""The model side of the framework: what happens at each step of training
(``nnabla.experimental.framework.worker``)."""
from __future__ import annotations

from . import _checks
from .evaluator import Evaluator
from .updater import Updater

__all__ = ["Worker"]


def _always(i, e, ag):
    return True


class Worker:
    """Base class of a model's training: variables, graphs, loss, solver, monitors, and
    the steps a :class:`~nnabla.experimental.framework.trainer.Trainer` calls.

    A subclass overrides the hooks it needs; the rest do nothing (or the standard thing):

    - preparation, called in this order by :meth:`training_prepare`: ``_ctx_init``,
      ``_var_init``, ``_comm_init``, ``_data_init``, ``_graph_init``, ``_loss_init``
      (sets ``self._loss``), ``_solver_init`` (sets ``self._solver``), ``_monitor_init``;
    - the trainer's steps: :meth:`load_checkpoint`, :meth:`epoch_loop_start`,
      :meth:`evaluate_at_epoch_start`, :meth:`iter_loop_start`, :meth:`update_in_iteration`,
      :meth:`iter_loop_end`, :meth:`epoch_loop_end`, :meth:`save_checkpoint_at_epoch_end`,
      :meth:`evaluate_at_training_end`, the ``save_model_*`` pair, :meth:`training_complete`
      and :meth:`brief`;
    - the callbacks of the :class:`~nnabla.experimental.framework.updater.Updater` held in
      ``self._updater`` (``_train_data_feeder``, ``_solver_zero_grad``, ``_loss_forward``,
      ``_loss_backward``, ``_comm_all_reduce``, ``_solver_update`` and their ``_on_start`` /
      ``_on_finish`` hooks) and of the
      :class:`~nnabla.experimental.framework.evaluator.Evaluator` in ``self._evaluator``
      (``_eval_data_feeder``, ``_eval_graph_forward``, ``_eval_callback_on_start`` /
      ``_on_finish``).

    The default solver and loss callbacks run ``self._solver.zero_grad()``,
    ``self._loss.forward(clear_no_need_grad=...)``, ``self._loss.backward(clear_buffer=...)``
    and ``self._solver.update()``; a loss set to None is skipped (for workers that run
    their graphs in other callbacks).

    Args:
        data (Data): the data to train and evaluate on (kept as ``self._data``).
        max_epoch (int): epochs to train (>= 0).
        iter_per_epoch (int): updates per epoch (>= 0).
        clear_buffer (bool): passed to the loss backward.
        clear_no_need_grad (bool): passed to the loss forward.

    Raises:
        TypeError, ValueError: ``max_epoch`` or ``iter_per_epoch`` is not an int >= 0.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> import nnabla.parametric_functions as PF, nnabla.solvers as S
        >>> from nnabla.experimental.framework import Trainer, Worker
        >>> class LineFit(Worker):
        ...     def _var_init(self):
        ...         self._x = nn.Variable((8, 1))
        ...         self._t = nn.Variable((8, 1))
        ...     def _loss_init(self):
        ...         self._loss = F.mean(F.squared_error(PF.affine(self._x, 1), self._t))
        ...     def _solver_init(self):
        ...         self._solver = S.Sgd(0.1)
        ...         self._solver.set_parameters(nn.get_parameters())
        ...     def _train_data_feeder(self, i, e, ag):
        ...         self._x.d = np.linspace(-1, 1, 8).reshape(8, 1)
        ...         self._t.d = 3 * self._x.d + 1
        ...     def brief(self):
        ...         return float(self._loss.d)
        >>> nn.clear_parameters()
        >>> trainer = Trainer(LineFit(data=None, max_epoch=20, iter_per_epoch=10))
        >>> trainer.train()
        >>> trainer.brief() < 1e-3
        True
    """

    # Utilities.

    def _load_parameters(self):
        """Load parameters (a hook for subclasses; does nothing here)."""

    def _save_parameters(self):
        """Save parameters (a hook for subclasses; does nothing here)."""

    def _load_model(self):
        """Load a model (a hook for subclasses; does nothing here)."""

    def _save_model(self):
        """Save a model (a hook for subclasses; does nothing here)."""

    def _loopCallbackCondition(self, i=0, e=0, ag=0, toExecute=_always):  # noqa: N802
        """Return ``toExecute(i, e, ag)``: whether a callback's body runs at this step.

        Callbacks wrap their body in ``if self._loopCallbackCondition(...)`` to run it only
        at some epochs or iterations (e.g. ``toExecute=lambda i, e, ag: e % 4 == 0``).
        """
        return toExecute(i, e, ag)

    def _force_to_list(self, x):
        """Return ``x`` as a list of callbacks (one callable becomes a one-element list)."""
        return _checks.callback_list(type(self).__name__, "callbacks", x)

    # Preparation, in the order training_prepare calls them.

    def _ctx_init(self):
        """Choose the context (e.g. ``nn.set_default_context(...)``); keeps the current one."""

    def _var_init(self):
        """Create the input variables (override)."""

    def _comm_init(self):
        """Create the communicator ``self._comm`` for distributed training (optional)."""

    def _data_init(self):
        """Prepare the data through the Data object's interface (optional)."""

    def _graph_init(self):
        """Build the training and evaluation graphs (override)."""

    def _loss_init(self):
        """Define ``self._loss`` (and error metrics) on the graphs (override)."""

    def _solver_init(self):
        """Create ``self._solver`` and give it the parameters (override)."""

    def _monitor_init(self):
        """Create the monitors (optional)."""

    def __init__(self, data, max_epoch=1, iter_per_epoch=1, clear_buffer=True,
                 clear_no_need_grad=True):
        name = type(self).__name__
        self._data = data
        self._max_epoch = _checks.count(name, "max_epoch", max_epoch, minimum=0)
        self._iter_per_epoch = _checks.count(name, "iter_per_epoch", iter_per_epoch, minimum=0)
        self._clear_buffer = clear_buffer
        self._clear_no_need_grad = clear_no_need_grad
        self._updater = Updater(
            train_data_feeder=self._train_data_feeder,
            solver_zero_grad=self._solver_zero_grad,
            solver_update=self._solver_update,
            loss_forward=self._loss_forward,
            loss_backward=self._loss_backward,
            loss_forward_callback_on_start=[self._loss_forward_callback_on_start],
            loss_forward_callback_on_finish=[self._loss_forward_callback_on_finish],
            loss_backward_callback_on_start=[self._loss_backward_callback_on_start],
            loss_backward_callback_on_finish=[self._loss_backward_callback_on_finish],
            comm_all_reduce_callback_on_start=[self._comm_all_reduce_callback_on_start],
            comm_all_reduce=self._comm_all_reduce,
            comm_all_reduce_callback_on_finish=[self._comm_all_reduce_callback_on_finish],
            solver_update_callback_on_start=[self._solver_update_callback_on_start],
            solver_update_callback_on_finish=[self._solver_update_callback_on_finish],
            accum_grad=1, comm=None, grads=[])
        self._evaluator = Evaluator(
            eval_data_feeder=self._eval_data_feeder,
            eval_graph_forward=self._eval_graph_forward,
            eval_callback_on_start=[self._eval_callback_on_start],
            eval_callback_on_finish=[self._eval_callback_on_finish],
            val_iter=1)

    # What the trainer calls.

    def max_epoch(self):
        """Return the number of epochs to train."""
        return self._max_epoch

    def iter_per_epoch(self):
        """Return the number of updates per epoch."""
        return self._iter_per_epoch

    def training_prepare(self):
        """Run the preparation hooks, ``_ctx_init`` to ``_monitor_init``, in order."""
        self._ctx_init()
        self._var_init()
        self._comm_init()
        self._data_init()
        self._graph_init()
        self._loss_init()
        self._solver_init()
        self._monitor_init()

    def training_complete(self):
        """Called once training is over (summaries, clean-up); does nothing here."""

    def load_checkpoint(self):
        """Restore a checkpoint and return the epoch to start from; here 0 (no checkpoint)."""
        return 0

    def brief(self):
        """Return a summary of the training (what :meth:`Trainer.brief` returns); None here."""

    def epoch_loop_start(self, e):
        """Called at the start of epoch ``e``; does nothing here."""

    def epoch_loop_end(self, e):
        """Called at the end of epoch ``e``; does nothing here."""

    def save_checkpoint_at_epoch_end(self, e):
        """Called after epoch ``e`` to save a checkpoint; does nothing here."""

    def iter_loop_start(self, i, e):
        """Called before update ``i`` of epoch ``e``; does nothing here."""

    def iter_loop_end(self, i, e):
        """Called after update ``i`` of epoch ``e`` (monitors go here); does nothing here."""

    def update_in_iteration(self, i, e):
        """Run one update through ``self._updater`` (zero_grad, forward, backward, update)."""
        if self._loopCallbackCondition(i=i, e=e):
            _required(self, "_updater", "update", "update_in_iteration").update(i, e)

    def evaluate_at_epoch_start(self, e):
        """Run ``self._evaluator`` at the start of epoch ``e``, before its updates."""
        if self._loopCallbackCondition(e=e):
            _required(self, "_evaluator", "evaluate", "evaluate_at_epoch_start").evaluate(e)

    def evaluate_at_training_end(self):
        """Run ``self._evaluator`` once more after the last epoch (as epoch ``max_epoch``)."""
        _required(self, "_evaluator", "evaluate", "evaluate_at_training_end").evaluate(
            self._max_epoch)

    def save_model_at_start(self):
        """Called before the first epoch to save the model; does nothing here."""

    def save_model_at_end(self):
        """Called after training to save the model; does nothing here."""

    # Updater callbacks.

    def _train_data_feeder(self, i, e, ag):
        """Fill the training inputs for pass ``ag`` of update ``i`` (override)."""

    def _solver_zero_grad(self, i, e):
        """Clear the gradients of the solver's parameters."""
        if self._loopCallbackCondition(i=i, e=e):
            _required(self, "_solver", "zero_grad", "_solver_zero_grad").zero_grad()

    def _loss_forward_callback_on_start(self, i, e, ag):
        """Called before the loss forward; does nothing here."""

    def _loss_forward(self, i, e, ag):
        """Run ``self._loss`` forward (skipped when the loss is None)."""
        if self._loopCallbackCondition(i=i, e=e, ag=ag):
            loss = _required(self, "_loss", "forward", "_loss_forward", none_ok=True)
            if loss is not None:
                loss.forward(clear_no_need_grad=self._clear_no_need_grad)

    def _loss_forward_callback_on_finish(self, i, e, ag):
        """Called after the loss forward; does nothing here."""

    def _loss_backward_callback_on_start(self, i, e, ag):
        """Called before the loss backward; does nothing here."""

    def _loss_backward(self, i, e, ag):
        """Run ``self._loss`` backward (skipped when the loss is None)."""
        if self._loopCallbackCondition(i=i, e=e, ag=ag):
            loss = _required(self, "_loss", "backward", "_loss_backward", none_ok=True)
            if loss is not None:
                loss.backward(clear_buffer=self._clear_buffer)

    def _loss_backward_callback_on_finish(self, i, e, ag):
        """Called after the loss backward; does nothing here."""

    def _comm_all_reduce_callback_on_start(self, i, e):
        """Called before the all-reduce; does nothing here."""

    def _comm_all_reduce(self, i, e):
        """Sum the gradients over processes with ``self._comm`` (when there is one).

        The gradients are ``self.grads`` when the worker defines it, else the Updater's.
        """
        if self._loopCallbackCondition(i=i, e=e):
            comm = getattr(self, "_comm", None)
            if comm is not None:
                grads = getattr(self, "grads", None)
                if grads is None:
                    grads = _required(self, "_updater", "grads", "_comm_all_reduce").grads
                comm.all_reduce(grads, division=False, inplace=False)

    def _comm_all_reduce_callback_on_finish(self, i, e):
        """Called after the all-reduce; does nothing here."""

    def _solver_update_callback_on_start(self, i, e):
        """Called before the solver update (weight decay, clipping go here); does nothing."""

    def _solver_update(self, i, e):
        """Apply the solver update."""
        if self._loopCallbackCondition(i=i, e=e):
            _required(self, "_solver", "update", "_solver_update").update()

    def _solver_update_callback_on_finish(self, i, e):
        """Called after the solver update; does nothing here."""

    # Evaluator callbacks.

    def _eval_callback_on_start(self, e):
        """Called before an evaluation (reset metric sums here); does nothing here."""

    def _eval_data_feeder(self, e, vi):
        """Fill the evaluation inputs for batch ``vi`` (override)."""

    def _eval_graph_forward(self, e, vi):
        """Run the evaluation graphs forward on batch ``vi`` (override)."""

    def _eval_callback_on_finish(self, e):
        """Called after an evaluation (report metrics here); does nothing here."""


def _required(worker, attribute, method, caller, none_ok=False):
    """Return ``worker.<attribute>``, checking that it was set and has ``method``."""
    name = type(worker).__name__
    value = getattr(worker, attribute, None)
    if value is None and none_ok and hasattr(worker, attribute):
        return None
    if value is None:
        raise RuntimeError(f"{name}.{caller}: self.{attribute} is not set; "
                           f"{_WHERE[attribute]}")
    if not hasattr(value, method):
        raise TypeError(f"{name}.{caller}: self.{attribute} must have a '{method}' "
                        f"({_EXPECTED[attribute]}); it is a {type(value).__name__}")
    return value


_WHERE = {
    "_solver": "create it in _solver_init (e.g. self._solver = S.Sgd(lr); "
               "self._solver.set_parameters(nn.get_parameters()))",
    "_loss": "define it in _loss_init (e.g. self._loss = F.mean(...)), or set it to None "
             "and run the graphs in other callbacks",
    "_updater": "Worker.__init__ creates it; a subclass that overrides __init__ must "
                "create it too (framework.updater.Updater(...))",
    "_evaluator": "Worker.__init__ creates it; a subclass that overrides __init__ must "
                  "create it too (framework.evaluator.Evaluator(...))",
}
_EXPECTED = {
    "_solver": "an nnabla.solvers.Solver",
    "_loss": "an nnabla.Variable",
    "_updater": "a framework.updater.Updater",
    "_evaluator": "a framework.evaluator.Evaluator",
}
