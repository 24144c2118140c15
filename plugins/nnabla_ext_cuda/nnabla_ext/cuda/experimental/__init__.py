"""``nnabla_ext.cuda.experimental``: helpers nnabla-ext-cuda marks experimental.

- :mod:`.dali_iterator`: NVIDIA DALI pipelines as nnabla data iterators (needs
  ``pip install nvidia-dali-cuda130``; without it the module imports, ``enabled`` is False
  and its helpers raise ``ImportError`` naming the package).
"""
