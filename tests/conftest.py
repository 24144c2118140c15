"""Suite-wide hooks: a skipped conformance test fails the run.

Tests marked ``@pytest.mark.conformance`` check the API against facts recorded from nnabla 1.39
(``tests/data/``). They must pass or fail, never skip (nor xfail): a skipped one would hide a
missing function or a changed signature while the suite stays green.
"""
import os

import pytest

# The CUDA plugin decides once per process whether it runs on CuPy or on its numpy
# emulation, when a test first activates it (any test listing or resolving backends can).
# Every in-process test runs it on the emulation; the gpu-marked tests start their own
# processes with NNABLA_CUDA_EMULATE=0.
os.environ.setdefault("NNABLA_CUDA_EMULATE", "1")

SKIPPED_CONFORMANCE = []


def pytest_runtest_logreport(report):
    if report.skipped and "conformance" in report.keywords:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        reason = getattr(report, "wasxfail", None) or str(reason).removeprefix("Skipped: ")
        SKIPPED_CONFORMANCE.append((report.nodeid, reason))


def pytest_sessionfinish(session):
    if SKIPPED_CONFORMANCE and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if SKIPPED_CONFORMANCE:
        terminalreporter.section("conformance tests skipped (this fails the run)", red=True)
        for nodeid, reason in SKIPPED_CONFORMANCE:
            terminalreporter.line(f"{nodeid}: {reason}")


def pytest_addoption(parser):
    parser.addoption("--backend", default="cpu",
                     help="run the function cases (tests/functions) on this backend's context, "
                          "with strict fallback (e.g. --backend boxed, --backend cuda)")
