"""nnabla's process-wide hooks (``nn.set_function_pre_hook`` ...): order around the call's
own hooks, forward and backward, solver operations, unset."""
import doctest

import numpy as np

import nnabla as nn
import nnabla.callback
import nnabla.functions as F
import nnabla.solvers as S


def test_global_function_hooks_wrap_the_calls_own_in_forward_and_backward():
    calls = []
    nn.set_function_pre_hook("a", lambda f: calls.append(("gpre", f.info.type_name)))
    nn.set_function_post_hook("a", lambda f: calls.append(("gpost", f.info.type_name)))
    try:
        x = nn.Variable.from_numpy_array(np.ones((2, 3)), need_grad=True)
        y = F.sum(F.relu(x))
        y.forward(function_pre_hook=lambda f: calls.append(("pre", f.info.type_name)),
                  function_post_hook=lambda f: calls.append(("post", f.info.type_name)))
        assert calls == [("gpre", "ReLU"), ("pre", "ReLU"), ("post", "ReLU"),
                         ("gpost", "ReLU"), ("gpre", "Sum"), ("pre", "Sum"),
                         ("post", "Sum"), ("gpost", "Sum")]
        calls.clear()
        y.backward()
        assert calls == [("gpre", "Sum"), ("gpost", "Sum"), ("gpre", "ReLU"), ("gpost", "ReLU")]
    finally:
        nn.unset_function_pre_hook("a")
        nn.unset_function_post_hook("a")
    calls.clear()
    y.forward()
    assert calls == []


def test_global_solver_hooks_run_around_each_parameter_of_each_operation():
    calls = []
    with nn.parameter_scope("global_hooks"):
        x = nn.Variable.from_numpy_array(np.ones((2, 3)))
        loss = F.sum(nn.parametric_functions.affine(x, 2))
        solver = S.Sgd(0.1)
        solver.set_parameters(nn.get_parameters())
    loss.forward()
    solver.zero_grad()
    loss.backward()
    nn.set_solver_pre_hook("a", lambda: calls.append("pre"))
    nn.set_solver_post_hook("a", lambda: calls.append("post"))
    try:
        solver.update(update_pre_hook=lambda: calls.append("own"))
        assert calls == ["pre", "own", "post"] * 2       # W and b
        calls.clear()
        solver.weight_decay(0.1)
        assert calls == ["pre", "post"] * 2
    finally:
        nn.unset_solver_pre_hook("a")
        nn.unset_solver_post_hook("a")
    assert nnabla.callback.UPDATING[0] is None


def test_setting_a_key_again_replaces_the_hook_and_none_is_ignored():
    calls = []
    nn.set_function_pre_hook("k", lambda f: calls.append(1))
    nn.set_function_pre_hook("k", lambda f: calls.append(2))
    nn.set_function_pre_hook("k", None)
    try:
        F.relu(nn.Variable((2,))).forward()
    finally:
        nn.unset_function_pre_hook("k")
    assert calls == [2]
    nn.unset_function_pre_hook("never set")      # no error, as nnabla


def test_the_callback_modules_doctest_passes():
    assert doctest.testmod(nnabla.callback).failed == 0
