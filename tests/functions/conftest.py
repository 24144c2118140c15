import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def backend_context(request):
    """``--backend NAME``: every engine-level case runs in NAME's context, and a function
    that would fall back to another device family fails instead of passing on the CPU."""
    name = request.config.getoption("--backend")
    if name == "cpu":
        yield
        return
    import nnabla as nn
    from nnabla.ext_utils import get_extension_context, set_strict_fallback
    ctx = get_extension_context(name)
    set_strict_fallback(True)
    try:
        with nn.context_scope(ctx):
            yield
    finally:
        set_strict_fallback(False)
