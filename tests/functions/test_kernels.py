"""Kernel-level checks: each CPU kernel against its reference, without the engine."""
import pytest

from nnabla.testing.function_cases import ALL_CASES
from kernel_harness import check_backward, check_forward


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.ref is not None], ids=str)
def test_kernel_forward_matches_reference(case):
    check_forward(case)


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.grad], ids=str)
def test_kernel_backward_matches_central_differences(case):
    check_backward(case)
