"""Tests of the order in which nnabla.experimental.framework calls things: the Updater's
step, the Evaluator's loop and the Trainer's hooks, each against a sequence written out by
hand. Apart from the two marked, these tests also pass on nnabla 1.39 itself."""
from nnabla.experimental.framework import Trainer, Worker
from nnabla.experimental.framework.evaluator import Evaluator
from nnabla.experimental.framework.updater import Updater


def recorder(log, name):
    return lambda *args: log.append((name,) + args)


def updater_with_everything(log, **kwargs):
    names = ["loss_forward", "loss_backward", "loss_forward_callback_on_start",
             "loss_forward_callback_on_finish", "loss_backward_callback_on_start",
             "loss_backward_callback_on_finish", "comm_all_reduce_callback_on_start",
             "comm_all_reduce", "comm_all_reduce_callback_on_finish",
             "solver_update_callback_on_start", "solver_update_callback_on_finish"]
    callbacks = {name: recorder(log, name) for name in names}
    return Updater(recorder(log, "feed"), recorder(log, "zero_grad"),
                   recorder(log, "update"), **{**callbacks, **kwargs})


def test_updater_step_order_with_gradient_accumulation():
    log = []
    updater_with_everything(log, accum_grad=2).update(4, 7)
    per_pass = [("feed", 4, 7), ("loss_forward_callback_on_start", 4, 7),
                ("loss_forward", 4, 7), ("loss_forward_callback_on_finish", 4, 7),
                ("loss_backward_callback_on_start", 4, 7), ("loss_backward", 4, 7),
                ("loss_backward_callback_on_finish", 4, 7)]
    with_ag = [[entry + (ag,) for entry in per_pass] for ag in (0, 1)]
    assert log == ([("zero_grad", 4, 7)] + with_ag[0] + with_ag[1]
                   + [("solver_update_callback_on_start", 4, 7), ("update", 4, 7),
                      ("solver_update_callback_on_finish", 4, 7)])


def test_all_reduce_runs_only_with_a_communicator_and_gradients():
    for comm, grads, expected in [(None, ["g"], False), (object(), [], False),
                                  (object(), ["g"], True)]:
        log = []
        updater_with_everything(log, comm=comm, grads=grads).update(0, 0)
        names = [entry[0] for entry in log]
        assert ("comm_all_reduce" in names) == expected
        if expected:
            at = names.index("comm_all_reduce")
            assert names[at - 1:at + 3] == ["comm_all_reduce_callback_on_start",
                                            "comm_all_reduce",
                                            "comm_all_reduce_callback_on_finish",
                                            "solver_update_callback_on_start"]


def test_callback_lists_and_grads_are_kept_by_reference():
    log, on_finish, grads = [], [], []
    updater = Updater(recorder(log, "feed"), recorder(log, "zero_grad"),
                      recorder(log, "update"), solver_update_callback_on_finish=on_finish,
                      comm=object(), comm_all_reduce=recorder(log, "all_reduce"), grads=grads)
    on_finish.append(recorder(log, "late"))       # added after the Updater was made
    grads.append("g")
    updater.update(1, 2)
    assert log == [("zero_grad", 1, 2), ("feed", 1, 2, 0), ("all_reduce", 1, 2),
                   ("update", 1, 2), ("late", 1, 2)]


def test_each_updater_has_its_own_default_gradient_list():
    # nnabla 1.39 shares one default list between all Updaters (a mutable default)
    first, second = Updater(len, len, len), Updater(len, len, len)
    first.grads.append("g")
    assert second.grads == []


def test_evaluator_loop_order():
    log = []
    Evaluator(recorder(log, "feed"), recorder(log, "forward"),
              eval_callback_on_start=[recorder(log, "start1"), recorder(log, "start2")],
              eval_callback_on_finish=recorder(log, "finish"), val_iter=2).evaluate(3)
    assert log == [("start1", 3), ("start2", 3), ("feed", 3, 0), ("forward", 3, 0),
                   ("feed", 3, 1), ("forward", 3, 1), ("finish", 3)]


class HookLog(Worker):
    """Logs the trainer's calls; its solver and loss callbacks log instead of computing."""

    def __init__(self, start):
        self.log, self.start = [], start
        super().__init__(data=None, max_epoch=2, iter_per_epoch=2)
        self._evaluator.val_iter = 1

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        hooks = {"load_checkpoint", "training_prepare", "save_model_at_start",
                 "epoch_loop_start", "iter_loop_start", "iter_loop_end", "epoch_loop_end",
                 "save_checkpoint_at_epoch_end", "save_model_at_end", "training_complete",
                 "_var_init", "_graph_init", "_loss_init", "_solver_init", "_monitor_init",
                 "_eval_data_feeder", "_train_data_feeder"}
        if name in hooks:
            log = object.__getattribute__(self, "log")
            return lambda *args: (log.append((name,) + args), value(*args))[1]
        return value

    def load_checkpoint(self):
        return self.start

    def _solver_zero_grad(self, i, e):
        self.log.append(("zero_grad", i, e))

    def _loss_forward(self, i, e, ag):
        self.log.append(("forward", i, e))

    def _loss_backward(self, i, e, ag):
        pass

    def _solver_update(self, i, e):
        self.log.append(("update", i, e))


def test_trainer_calls_the_worker_hooks_in_nnabla_order_from_the_checkpoint_epoch():
    worker = HookLog(start=5)
    Trainer(worker).train()
    preparation = [("load_checkpoint",), ("training_prepare",), ("_var_init",),
                   ("_graph_init",), ("_loss_init",), ("_solver_init",), ("_monitor_init",),
                   ("save_model_at_start",)]

    def iteration(i, e):
        return [("iter_loop_start", i, e), ("zero_grad", i, e), ("_train_data_feeder", i, e, 0),
                ("forward", i, e), ("update", i, e), ("iter_loop_end", i, e)]

    def epoch(e):
        return ([("epoch_loop_start", e), ("_eval_data_feeder", e, 0)] + iteration(0, e)
                + iteration(1, e) + [("epoch_loop_end", e), ("save_checkpoint_at_epoch_end", e)])

    # the last evaluation is labelled with max_epoch (2), not with the last epoch + 1
    assert worker.log == (preparation + epoch(5) + epoch(6)
                          + [("_eval_data_feeder", 2, 0), ("save_model_at_end",),
                             ("training_complete",)])


def test_loop_callback_condition_gates_a_callback():
    class EveryOtherEpoch(Worker):
        def evaluate_at_epoch_start(self, e):
            if self._loopCallbackCondition(e=e, toExecute=lambda i, e, ag: e % 2 == 0):
                self._evaluator.evaluate(e)

        def _eval_callback_on_start(self, e):
            self.evaluated.append(e)

        def _solver_zero_grad(self, i, e):
            pass

        _solver_update = _solver_zero_grad

    worker = EveryOtherEpoch(None, max_epoch=5, iter_per_epoch=1)
    worker.evaluated, worker._loss = [], None
    Trainer(worker).train()
    assert worker.evaluated == [0, 2, 4, 5]


def test_the_default_all_reduce_sums_the_updaters_gradients_with_the_communicator():
    # nnabla 1.39 reads `self.grads`, which its Worker never defines (AttributeError)
    class Comm:
        calls = []

        def all_reduce(self, data, division, inplace):
            self.calls.append((data, division, inplace))

    worker = Worker(None)
    worker._comm = Comm()
    worker._updater.grads.append("dW")
    worker._comm_all_reduce(0, 0)
    assert Comm.calls == [(["dW"], False, False)]
    worker.grads = ["own"]                  # a worker's own `grads` takes precedence
    worker._comm_all_reduce(0, 0)
    assert Comm.calls[-1] == (["own"], False, False)
