"""Every spec entry has a test case and a CPU kernel; every nnabla 1.39 function exists."""
import pathlib

import pytest

import nnabla.functions as F
from all_cases import ALL_CASES
from nnabla._spec import SPECS
from nnabla_ext.cpu.kernels import CPU_KERNELS

NAMES = pathlib.Path(__file__).resolve().parents[3] / "shared" / "conformance" / \
    "nnabla_1.39_function_names.txt"


def test_every_spec_entry_has_a_case_and_a_cpu_kernel():
    covered = {c.name for c in ALL_CASES}
    assert sorted(set(SPECS) - covered) == []
    assert sorted(set(SPECS) - set(CPU_KERNELS)) == []


def test_every_registered_kernel_has_a_spec_entry():
    assert sorted(set(CPU_KERNELS) - set(SPECS)) == []


def test_every_nnabla_function_name_exists():
    if not NAMES.exists():
        pytest.skip("shared/conformance is not beside the checkout")
    names = [line.strip() for line in NAMES.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(names) == 230
    assert [n for n in names if not hasattr(F, n)] == []
