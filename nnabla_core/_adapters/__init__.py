"""Hand-written ``F.*`` wrappers whose Python signature differs from the function type's.

Each category module exports ``__all__``; its functions override the
spec-generated function of the same name in ``nnabla.functions``.
"""
