"""Base class of the function-hook helpers of ``nnabla.utils.inspection``."""
from __future__ import annotations


class FunctionHookCallbackBase:
    """A pair of callbacks for ``forward``/``backward``'s ``function_pre_hook`` and
    ``function_post_hook`` arguments; each is called with the function being run.

    Subclasses override the :attr:`pre_hook` and :attr:`post_hook` properties.
    """

    @property
    def pre_hook(self):
        """callable: The ``function_pre_hook`` callback."""
        raise NotImplementedError(f"{type(self).__name__} does not define pre_hook")

    @property
    def post_hook(self):
        """callable: The ``function_post_hook`` callback."""
        raise NotImplementedError(f"{type(self).__name__} does not define post_hook")
