"""What every published model class shares: ``use_up_to`` keys naming variables of its
network (``_KEY_VARIABLE``, formatted with per-call values) and the input variable check."""
from __future__ import annotations

from .._variable import Variable


class KeyedModel:
    """Mixin of the model base classes (ImageNet, object detection, semantic segmentation).

    A subclass defines ``_KEY_VARIABLE`` (key -> variable name, a format string) and
    ``input_shape`` (channels, height, width)."""

    def use_up_to(self, key, callback, **variable_format_dict):
        """Tell ``callback`` to stop at the variable of ``use_up_to`` key ``key``."""
        callback.use_up_to(self._key_variable(key, **variable_format_dict))

    def _key_variable(self, key, **variable_format_dict):
        if key not in self._KEY_VARIABLE:
            raise ValueError(f'The key "{key}" is not present in {type(self).__name__}. '
                             f"Available keys are {list(self._KEY_VARIABLE.keys())}.")
        return self._KEY_VARIABLE[key].format(**variable_format_dict)

    def get_input_var(self, input_var):
        """``input_var``, or a new ``(1,) + input_shape`` variable; checks NCHW RGB."""
        if input_var is None:
            input_var = Variable((1,) + self.input_shape)
        if input_var.ndim != 4:
            raise ValueError(f"{type(self).__name__}: input_var must be 4 dimensions. "
                             f"Given {input_var.ndim}.")
        if input_var.shape[1] != 3:
            raise ValueError(f"{type(self).__name__}: input_var.shape[1] must be 3 (RGB). "
                             f"Given {input_var.shape[1]}.")
        return input_var
