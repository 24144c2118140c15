"""Tests of nnabla.experimental.framework's API: the same classes, methods and signatures
as nnabla 1.39 (recorded in tests/data/framework), the docstring examples, and clear errors
for bad input."""
import doctest
import json
import os

import pytest

import nnabla.experimental.framework as framework
from framework_api import describe
from nnabla.experimental.framework import Data, Evaluator, Trainer, Updater, Worker

RECORDED = os.path.join(os.path.dirname(__file__), "..", "data", "framework",
                        "nnabla_1.39_framework_api.json")


def noop(*args):
    pass


@pytest.mark.conformance
def test_classes_methods_and_signatures_are_nnabla_1_39s():
    with open(RECORDED) as f:
        recorded = json.load(f)
    assert recorded["nnabla"] == "1.39.0"
    assert describe(framework) == recorded["api"]


def test_upstream_import_forms_work():
    from nnabla.experimental.framework import Data as D, Trainer as T, Worker as W
    assert (D, T, W) == (framework.data.Data, framework.trainer.Trainer,
                         framework.worker.Worker)
    assert framework.updater.Updater is Updater and framework.evaluator.Evaluator is Evaluator


@pytest.mark.parametrize("module", ["data", "evaluator", "trainer", "updater", "worker"])
def test_the_docstring_examples_pass(module):
    result = doctest.testmod(getattr(framework, module))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("argument", ["train_data_feeder", "solver_zero_grad", "solver_update",
                                      "loss_forward", "comm_all_reduce"])
def test_updater_refuses_a_non_callable_callback_naming_it(argument):
    kwargs = dict(train_data_feeder=noop, solver_zero_grad=noop, solver_update=noop)
    kwargs[argument] = "update"
    with pytest.raises(TypeError, match=f"Updater: argument '{argument}' must be callable "
                                        r"\(a function, method or lambda\); given str 'update'"):
        Updater(**kwargs)


def test_a_callback_list_with_a_non_callable_element_names_its_index():
    with pytest.raises(TypeError, match=r"'solver_update_callback_on_start\[1\]' must be "
                                        r"callable.*given NoneType"):
        Updater(noop, noop, noop, solver_update_callback_on_start=[noop, None])
    with pytest.raises(TypeError, match=r"'eval_callback_on_finish\[0\]'"):
        Evaluator(noop, noop, eval_callback_on_finish=(3,))


@pytest.mark.parametrize("accum_grad, error, given", [
    (0, ValueError, "given 0"), (-2, ValueError, "given -2"),
    (1.5, TypeError, "given float 1.5"), (True, TypeError, "given bool True"),
    ("2", TypeError, "given str '2'")])
def test_updater_accum_grad_must_be_a_positive_int(accum_grad, error, given):
    with pytest.raises(error, match=f"Updater: argument 'accum_grad' must be an int >= 1; "
                                    f"{given}"):
        Updater(noop, noop, noop, accum_grad=accum_grad)


def test_updater_grads_must_be_a_list():
    with pytest.raises(TypeError, match="'grads' must be a list of nnabla.NdArray; given dict"):
        Updater(noop, noop, noop, grads={})


@pytest.mark.parametrize("val_iter, error", [(-1, ValueError), (2.0, TypeError),
                                             (None, TypeError)])
def test_evaluator_val_iter_must_be_a_non_negative_int(val_iter, error):
    with pytest.raises(error, match="Evaluator: argument 'val_iter' must be an int >= 0"):
        Evaluator(noop, noop, val_iter=val_iter)


def test_evaluator_refuses_non_callable_feeder_and_forward():
    with pytest.raises(TypeError, match="'eval_data_feeder' must be callable"):
        Evaluator(None, noop)
    with pytest.raises(TypeError, match="'eval_graph_forward' must be callable"):
        Evaluator(noop, [noop])


def test_trainer_refuses_an_object_without_the_worker_methods():
    with pytest.raises(TypeError, match="Trainer: argument 'worker' must be a nnabla.experimental"
                                        r".framework.Worker .*given NoneType, which lacks "
                                        "load_checkpoint, training_prepare"):
        Trainer(None)


class CountingWorker(Worker):
    """A worker whose updates only count, with the counts the trainer reads settable."""

    def __init__(self, start=0, epochs=1, iterations=1):
        super().__init__(data=None)
        self.start, self.epochs, self.iterations, self.updates = start, epochs, iterations, 0

    def load_checkpoint(self):
        return self.start

    def max_epoch(self):
        return self.epochs

    def iter_per_epoch(self):
        return self.iterations

    def update_in_iteration(self, i, e):
        self.updates += 1


@pytest.mark.parametrize("field, value, error, message", [
    ("start", None, TypeError, r"load_checkpoint\(\) must return an int >= 0 "
                               r"\(an epoch or iteration count\); returned NoneType None"),
    ("start", -1, ValueError, r"load_checkpoint\(\) must return an int >= 0.*returned int -1"),
    ("epochs", 2.0, TypeError, r"max_epoch\(\) must return an int >= 0.*float 2.0"),
    ("iterations", "3", TypeError, r"iter_per_epoch\(\) must return .*str '3'")])
def test_trainer_checks_the_counts_the_worker_returns(field, value, error, message):
    worker = CountingWorker()
    setattr(worker, field, value)
    with pytest.raises(error, match="Trainer.train: CountingWorker." + message):
        Trainer(worker).train()
    assert worker.updates == 0


def test_worker_refuses_bad_epoch_and_iteration_counts():
    with pytest.raises(ValueError, match="Worker: argument 'max_epoch' must be an int >= 0; "
                                         "given -1"):
        Worker(None, max_epoch=-1)
    with pytest.raises(TypeError, match="Worker: argument 'iter_per_epoch' .*given float 0.5"):
        Worker(None, iter_per_epoch=0.5)


def test_a_worker_without_a_solver_says_where_to_create_it():
    worker = Worker(None)
    with pytest.raises(RuntimeError, match=r"Worker._solver_zero_grad: self._solver is not set; "
                                           r"create it in _solver_init"):
        Trainer(worker).train()


def test_a_solver_of_the_wrong_type_is_named():
    class ListSolver(Worker):
        def _solver_init(self):
            self._solver = []

    with pytest.raises(TypeError, match=r"ListSolver._solver_zero_grad: self._solver must have "
                                        r"a 'zero_grad' \(an nnabla.solvers.Solver\); it is a "
                                        r"list"):
        Trainer(ListSolver(None)).train()


def test_a_missing_loss_is_an_error_but_a_loss_set_to_none_is_skipped():
    class Solver:
        def __init__(self):
            self.calls = []

        def zero_grad(self):
            self.calls.append("zero_grad")

        def update(self):
            self.calls.append("update")

    class NoLoss(Worker):
        def _solver_init(self):
            self._solver = Solver()

    with pytest.raises(RuntimeError, match=r"NoLoss._loss_forward: self._loss is not set; "
                                           r"define it in _loss_init"):
        Trainer(NoLoss(None)).train()

    class LossNone(NoLoss):
        def _loss_init(self):
            self._loss = None

    worker = LossNone(None, max_epoch=1, iter_per_epoch=2)
    Trainer(worker).train()
    assert worker._solver.calls == ["zero_grad", "update"] * 2


def test_a_subclass_init_without_an_updater_is_told_to_create_one():
    class Bare(Worker):
        def __init__(self):
            self._max_epoch, self._iter_per_epoch = 1, 1

        def evaluate_at_epoch_start(self, e):
            pass

    with pytest.raises(RuntimeError, match=r"Bare.update_in_iteration: self._updater is not "
                                           r"set; Worker.__init__ creates it"):
        Trainer(Bare()).train()


def test_the_base_data_needs_a_data_iterator_hook():
    with pytest.raises(NotImplementedError, match=r"Data.__data_iterator__: a Data subclass "
                                                  r"must define __data_iterator__"):
        Data()


def test_data_accessors_without_an_iterator_say_what_to_override():
    class OwnInit(Data):
        def __init__(self):
            pass

    for method in ("next", "size", "reset"):
        with pytest.raises(NotImplementedError, match=f"OwnInit.{method}: this Data has no "
                                                      f"_data_iterator.*override {method}"):
            getattr(OwnInit(), method)()
