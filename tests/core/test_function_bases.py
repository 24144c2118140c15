"""nnabla.function_bases: the spec-generated functions, reachable as nn.function_bases."""
import nnabla as nn
import nnabla.functions as F
from nnabla._spec import SPECS


def test_every_spec_function_is_in_function_bases():
    for spec in SPECS.values():
        assert callable(getattr(nn.function_bases, spec.snake))


def test_function_bases_holds_the_unadapted_functions():
    assert nn.function_bases.affine is F.BASES["affine"]
