"""One optimisation step of the framework as a sequence of callbacks
(``nnabla.experimental.framework.updater``)."""
from __future__ import annotations

from . import _checks

__all__ = ["Updater"]

# The default of ``grads``: recognised by identity so that each Updater gets its own list.
_NO_GRADS = []


def _nothing_with_accum(i, e, ag):
    return True


def _nothing(i, e):
    return True


class Updater:
    """Runs one training step, :meth:`update`, by calling the callbacks it was given.

    The solver and the loss are not held here: the callbacks (usually methods of a
    :class:`~nnabla.experimental.framework.worker.Worker`) own them. Every callback gets
    the iteration ``i`` within the epoch and the epoch ``e``; those of the forward/backward
    phase also get ``ag``, the index of the gradient-accumulation pass. Callback arguments
    ending in ``_on_start`` / ``_on_finish`` take one callable or a list of callables,
    called in list order.

    One step is::

        solver_zero_grad(i, e)
        for ag in range(accum_grad):
            train_data_feeder(i, e, ag)
            loss_forward_callback_on_start*, loss_forward, loss_forward_callback_on_finish*
            loss_backward_callback_on_start*, loss_backward, loss_backward_callback_on_finish*
        if comm and grads:                       # distributed training only
            comm_all_reduce_callback_on_start*, comm_all_reduce,
            comm_all_reduce_callback_on_finish*
        solver_update_callback_on_start*, solver_update, solver_update_callback_on_finish*

    Args:
        train_data_feeder (callable): ``(i, e, ag)``, fills the training inputs.
        solver_zero_grad (callable): ``(i, e)``, clears the gradients.
        solver_update (callable): ``(i, e)``, applies the solver update.
        loss_forward (callable, optional): ``(i, e, ag)``, runs the loss forward.
        loss_backward (callable, optional): ``(i, e, ag)``, runs the loss backward.
        loss_forward_callback_on_start (callable or list, optional): ``(i, e, ag)``.
        loss_forward_callback_on_finish (callable or list, optional): ``(i, e, ag)``.
        loss_backward_callback_on_start (callable or list, optional): ``(i, e, ag)``.
        loss_backward_callback_on_finish (callable or list, optional): ``(i, e, ag)``.
        comm_all_reduce_callback_on_start (callable or list, optional): ``(i, e)``.
        comm_all_reduce (callable, optional): ``(i, e)``, all-reduces the gradients.
        comm_all_reduce_callback_on_finish (callable or list, optional): ``(i, e)``.
        solver_update_callback_on_start (callable or list, optional): ``(i, e)``.
        solver_update_callback_on_finish (callable or list, optional): ``(i, e)``.
        accum_grad (int): forward/backward passes per update (>= 1).
        comm (nnabla.communicators.Communicator, optional): when given (and ``grads`` is not
            empty) the all-reduce phase runs.
        grads (list of nnabla.NdArray): the gradients exchanged in distributed training. A
            list is kept as given, so it may be filled after the Updater is made.

    Raises:
        TypeError: a callback is not callable, ``accum_grad`` is not an int, or ``grads`` is
            not a list or tuple.
        ValueError: ``accum_grad < 1``.

    Example:
        >>> from nnabla.experimental.framework.updater import Updater
        >>> calls = []
        >>> updater = Updater(train_data_feeder=lambda i, e, ag: calls.append(("feed", ag)),
        ...                   solver_zero_grad=lambda i, e: calls.append("zero_grad"),
        ...                   solver_update=lambda i, e: calls.append("update"),
        ...                   accum_grad=2)
        >>> updater.update(0, 0)
        >>> calls
        ['zero_grad', ('feed', 0), ('feed', 1), 'update']
    """

    def _force_to_list(self, x):
        """Return ``x`` as a list of callbacks (one callable becomes a one-element list)."""
        return _checks.callback_list("Updater", "callbacks", x)

    def __init__(self,
                 train_data_feeder,
                 solver_zero_grad,
                 solver_update,
                 loss_forward=_nothing_with_accum,
                 loss_backward=_nothing_with_accum,
                 loss_forward_callback_on_start=_nothing_with_accum,
                 loss_forward_callback_on_finish=_nothing_with_accum,
                 loss_backward_callback_on_start=_nothing_with_accum,
                 loss_backward_callback_on_finish=_nothing_with_accum,
                 comm_all_reduce_callback_on_start=_nothing,
                 comm_all_reduce=_nothing,
                 comm_all_reduce_callback_on_finish=_nothing,
                 solver_update_callback_on_start=_nothing,
                 solver_update_callback_on_finish=_nothing,
                 accum_grad=1,
                 comm=None,
                 grads=_NO_GRADS):
        single = _checks.callback
        many = _checks.callback_list
        self.train_data_feeder = single("Updater", "train_data_feeder", train_data_feeder)
        self.solver_zero_grad = single("Updater", "solver_zero_grad", solver_zero_grad)
        self.loss_forward_callback_on_start = many(
            "Updater", "loss_forward_callback_on_start", loss_forward_callback_on_start)
        self.loss_forward = single("Updater", "loss_forward", loss_forward)
        self.loss_forward_callback_on_finish = many(
            "Updater", "loss_forward_callback_on_finish", loss_forward_callback_on_finish)
        self.loss_backward_callback_on_start = many(
            "Updater", "loss_backward_callback_on_start", loss_backward_callback_on_start)
        self.loss_backward = single("Updater", "loss_backward", loss_backward)
        self.loss_backward_callback_on_finish = many(
            "Updater", "loss_backward_callback_on_finish", loss_backward_callback_on_finish)
        self.comm_all_reduce_callback_on_start = many(
            "Updater", "comm_all_reduce_callback_on_start", comm_all_reduce_callback_on_start)
        self.comm_all_reduce = single("Updater", "comm_all_reduce", comm_all_reduce)
        self.comm_all_reduce_callback_on_finish = many(
            "Updater", "comm_all_reduce_callback_on_finish", comm_all_reduce_callback_on_finish)
        self.solver_update_callback_on_start = many(
            "Updater", "solver_update_callback_on_start", solver_update_callback_on_start)
        self.solver_update = single("Updater", "solver_update", solver_update)
        self.solver_update_callback_on_finish = many(
            "Updater", "solver_update_callback_on_finish", solver_update_callback_on_finish)
        self.accum_grad = _checks.count("Updater", "accum_grad", accum_grad, minimum=1)
        self.comm = comm
        self.grads = _gradient_list(grads)

    def update(self, i, e):
        """Run one training step (see the class docstring for the order of the calls).

        Args:
            i (int): the iteration within the epoch.
            e (int): the epoch.
        """
        self.solver_zero_grad(i, e)
        for ag in range(self.accum_grad):
            self.train_data_feeder(i, e, ag)
            _phase(self.loss_forward_callback_on_start, self.loss_forward,
                   self.loss_forward_callback_on_finish, i, e, ag)
            _phase(self.loss_backward_callback_on_start, self.loss_backward,
                   self.loss_backward_callback_on_finish, i, e, ag)
        if self.comm and len(self.grads) != 0:
            _phase(self.comm_all_reduce_callback_on_start, self.comm_all_reduce,
                   self.comm_all_reduce_callback_on_finish, i, e)
        _phase(self.solver_update_callback_on_start, self.solver_update,
               self.solver_update_callback_on_finish, i, e)


def _phase(on_start, action, on_finish, *args):
    for hook in on_start:
        hook(*args)
    action(*args)
    for hook in on_finish:
        hook(*args)


def _gradient_list(grads):
    if grads is _NO_GRADS:
        return []
    if isinstance(grads, list):
        return grads
    if isinstance(grads, tuple):
        return list(grads)
    raise TypeError("Updater: argument 'grads' must be a list of nnabla.NdArray; "
                    f"given {type(grads).__name__}")
