"""Debugging helpers for graphs (``nnabla.utils.inspection``): :func:`pprint` prints a
graph's functions, :class:`NanInfTracer` finds the first NaN/inf, :class:`TimeProfiler`
times each function."""
from __future__ import annotations

from .base import FunctionHookCallbackBase
from .pretty_print import PrettyPrinter, pprint
from .profile import CpuTimerCallback, TimeProfiler
from .value_trace import NanInfTracer

__all__ = ["FunctionHookCallbackBase", "PrettyPrinter", "pprint",
           "CpuTimerCallback", "TimeProfiler", "NanInfTracer"]
