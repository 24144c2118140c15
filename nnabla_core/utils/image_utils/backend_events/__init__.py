"""The backends of ``nnabla.utils.image_utils``, one module per image library."""
