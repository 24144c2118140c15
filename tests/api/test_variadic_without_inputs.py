"""A variadic function called without inputs raises an error that is both a ValueError (as
Python code expects) and an AssertionError (what nnabla 1.39 raises: its wrappers assert that
at least one input is given), naming the function and the argument."""
import pytest

import nnabla.functions as F
from nnabla._spec import SPECS

# the functions whose first input is variadic in nnabla 1.39; each raised AssertionError
# ("<name> must take more than 1 inputs") when called without inputs there
NNABLA_VARIADIC = ["add_n", "concatenate", "einsum", "meshgrid", "mul_n", "sink", "stack"]


def test_the_variadic_functions_are_nnablas():
    variadic = sorted(spec.snake for spec in SPECS.values()
                      if spec.inputs and spec.inputs[0].variadic)
    assert variadic == NNABLA_VARIADIC


@pytest.mark.parametrize("name", NNABLA_VARIADIC)
def test_no_inputs_is_an_assertion_and_value_error_naming_the_function(name):
    with pytest.raises(AssertionError) as raised:
        getattr(F, name)()
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == (f"F.{name}: argument 'x' has no variables; "
                                 f"expected at least one input")


def test_an_empty_list_of_inputs_is_refused_too():
    with pytest.raises(ValueError, match="F.concatenate: argument 'x' has no variables"):
        F.concatenate(*[], axis=0)
    with pytest.raises(AssertionError, match="F.sink"):
        F.sink(*[], one_input_grad=False)
