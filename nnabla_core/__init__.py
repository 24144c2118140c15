"""nnabla: Neural Network Libraries, drop-in compatible core.

The core defines contexts, arrays, the function interfaces, the computation
graph, parameters and the solver interface; kernels come from plugins
(``nnabla_ext.cpu`` and any installed third-party backend), discovered through
the ``nnabla.plugins`` entry points at the end of ``import nnabla``.
"""
from __future__ import annotations

__version__ = "1.39.0"
__core_version__ = "0.2.0"

from . import plugins  # noqa: E402
from .logger import logger  # noqa: E402,F401
from ._graph import forward as _forward  # noqa: E402
from ._nd_array import NdArray  # noqa: E402,F401
from ._variable import Variable  # noqa: E402,F401
from .auto_forward import auto_forward, get_auto_forward, set_auto_forward  # noqa: E402,F401
from .context import (Context, context_scope, get_current_context,  # noqa: E402,F401
                      set_default_context)
from .parameter import (clear_parameters, get_current_parameter_scope,  # noqa: E402,F401
                        get_parameters, load_parameters, no_grad, parameter_scope,
                        save_parameters)
from .random import seed  # noqa: E402,F401
from ._runtime_flags import set_global_recompute  # noqa: E402,F401
from ._recompute import get_global_recompute, recompute, recompute_fn  # noqa: E402,F401
from ._array_preference import (array_classes, prefer_cached_array,  # noqa: E402,F401
                                reset_array_preference)
from .grad import grad  # noqa: E402,F401  (loads the nnabla.grad module too)
from .callback import (set_function_post_hook, set_function_pre_hook,  # noqa: E402,F401
                       set_solver_post_hook, set_solver_pre_hook, unset_function_post_hook,
                       unset_function_pre_hook, unset_solver_post_hook, unset_solver_pre_hook)
from . import _operators  # noqa: E402
from . import _function_instance, function  # noqa: E402

_function_instance.install(function)   # nnabla.function.<Type> classes
from .core import graph_def  # noqa: E402,F401
from .core.graph_def import ProtoVariable  # noqa: E402,F401
from .core.module import Module  # noqa: E402,F401
from .core.sequential import Sequential  # noqa: E402,F401

_operators.install_all()      # the methods of NdArray and Variable that run functions


def forward_all(variables, clear_buffer=False, clear_no_need_grad=False,
                function_pre_hook=None, function_post_hook=None):
    """Run forward up to every variable of ``variables`` in one pass.

    ``variables`` themselves (and the leaves) are never cleared by ``clear_buffer``.
    """
    _forward([v._node for v in variables], clear_buffer, clear_no_need_grad,
             function_pre_hook, function_post_hook)


_LAZY_SUBMODULES = ("functions", "function_bases", "parametric_functions", "solvers",
                    "initializer", "ext_utils", "utils", "backward_functions")


def __getattr__(name):
    """``nn.functions`` and friends without an explicit import, as nnabla allows."""
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'nnabla' has no attribute {name!r}")


# Last, so a plugin may use any name above at its top level (``from nnabla import Context``).
plugins.REGISTRY.discover()
