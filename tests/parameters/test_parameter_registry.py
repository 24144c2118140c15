"""Parameter scopes, creation, lookup and no_grad (nnabla.parameter)."""

import nnabla as nn
import nnabla.initializer as I
import numpy as np
import pytest
from nnabla.parameter import (
    get_current_parameter_scope,
    get_parameter,
    get_parameter_or_create,
    get_parameters,
    no_grad,
    parameter_scope,
    pop_parameter,
    set_parameter,
)


def test_top_level_names_are_the_parameter_module_functions():
    for name in ["parameter_scope", "get_parameters", "clear_parameters", "save_parameters",
                 "load_parameters", "no_grad"]:
        assert getattr(nn, name) is getattr(nn.parameter, name), name


def test_nested_scopes_join_names_with_slashes():
    with parameter_scope("net"), parameter_scope("fc1"):
        get_parameter_or_create("W", (2, 3))
    with parameter_scope("net/fc2"):
        get_parameter_or_create("W", (3, 4))
    assert list(get_parameters()) == ["net/fc1/W", "net/fc2/W"]


def test_slash_scope_and_nested_scopes_reach_the_same_parameter():
    with parameter_scope("aaa/bbb"):
        first = get_parameter_or_create("ccc", (2, 3))
    first.d = np.arange(6).reshape(2, 3)
    with parameter_scope("aaa"), parameter_scope("bbb"):
        again = get_parameter_or_create("ccc", (2, 3))
    np.testing.assert_array_equal(again.d, np.arange(6).reshape(2, 3))


def test_scope_is_restored_after_an_exception():
    root = get_current_parameter_scope()
    with pytest.raises(RuntimeError), parameter_scope("inner"):
        raise RuntimeError("boom")
    assert get_current_parameter_scope() is root


def test_parameter_scope_accepts_an_explicit_scope_dict():
    from collections import OrderedDict

    private = OrderedDict()
    with parameter_scope("sub", scope=private):
        get_parameter_or_create("W", (2,))
    assert "W" in private["sub"] and get_parameters() == {}


def test_parameter_scope_rejects_a_non_dict_scope():
    with pytest.raises(ValueError, match="scope"), parameter_scope("x", scope=[1]):
        pass


def test_set_get_pop_parameter_round_trip():
    variable = nn.Variable((2, 3))
    set_parameter("a/b/c", variable)
    assert get_parameter("a/b/c") is variable
    assert pop_parameter("a/b/c") is variable
    assert get_parameter("a/b/c") is None


def test_created_parameter_without_initializer_is_zero():
    param = get_parameter_or_create("zeros", (3, 2))
    np.testing.assert_array_equal(param.d, np.zeros((3, 2)))


def test_initializer_runs_only_when_the_parameter_is_created():
    calls = []

    def initializer(shape):
        calls.append(tuple(shape))
        return np.ones(shape, dtype=np.float32)

    get_parameter_or_create("p", (2, 2), initializer)
    get_parameter_or_create("p", (2, 2), initializer)
    assert calls == [(2, 2)]


def test_numpy_initializer_gives_values_and_shape():
    values = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    param = get_parameter_or_create("from_numpy", initializer=values)
    np.testing.assert_array_equal(param.d, values)


def test_returned_variable_is_unlinked_but_shares_data():
    param = get_parameter_or_create("shared", (2,), I.ConstantInitializer(1))
    param.need_grad = False
    registered = get_parameters(grad_only=False)["shared"]
    assert registered is not param and registered.need_grad
    param.d = 5
    np.testing.assert_array_equal(registered.d, [5, 5])


def test_need_grad_overwrites_registered_flag_and_as_need_grad_does_not():
    get_parameter_or_create("p", (2,), need_grad=True)
    get_parameter_or_create("p", (2,), need_grad=False)
    assert not get_parameters(grad_only=False)["p"].need_grad
    view = get_parameter_or_create("p", (2,), need_grad=True, as_need_grad=False)
    assert not view.need_grad and get_parameters()["p"].need_grad


def test_grad_only_filters_parameters_without_gradients():
    get_parameter_or_create("trainable", (1,), need_grad=True)
    get_parameter_or_create("running", (1,), need_grad=False)
    assert list(get_parameters()) == ["trainable"]
    assert list(get_parameters(grad_only=False)) == ["trainable", "running"]


def test_returned_variable_is_named_after_the_last_component():
    assert get_parameter_or_create("aaa/bbb/ccc", (2,)).name == "ccc"


def test_shape_mismatch_with_existing_parameter_names_both_shapes():
    with parameter_scope("layer"):
        get_parameter_or_create("W", (2, 3))
        with pytest.raises(ValueError, match=r"layer/W.*\(2, 3\).*\(3, 2\)"):
            get_parameter_or_create("W", (3, 2))


def test_numpy_initializer_with_a_different_shape_is_refused():
    with pytest.raises(ValueError, match="initializer"):
        get_parameter_or_create("bad", (2, 2), np.zeros((3,), np.float32))


def test_unusable_initializer_is_refused_with_its_type():
    with pytest.raises(ValueError, match="str"):
        get_parameter_or_create("bad", (2,), "zeros")


def test_no_grad_returns_parameters_without_gradients_and_keeps_registry():
    with no_grad():
        view = get_parameter_or_create("p", (2,), need_grad=True)
    assert not view.need_grad
    assert get_parameters()["p"].need_grad
    assert get_parameter_or_create("p", (2,)).need_grad


def test_no_grad_false_leaves_gradients_on():
    with no_grad(False):
        assert get_parameter_or_create("p", (2,)).need_grad


def test_clear_parameters_empties_only_the_current_scope():
    get_parameter_or_create("keep", (1,))
    with parameter_scope("drop"):
        get_parameter_or_create("W", (1,))
        nn.parameter.clear_parameters()
    assert list(get_parameters()) == ["keep"]
