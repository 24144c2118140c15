"""Contributed helpers kept for compatibility (``nnabla.contrib``)."""
