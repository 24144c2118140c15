"""Reasons of the tutorial tests marked ``xfail``: framework bugs and missing features."""

BIAS_GRAD_BUG = ("nnabla_ext.cpu Affine/Convolution/Deconvolution backward test the bias by "
                 "`xs[2] is not None`, but the engine passes only the inputs backward needs "
                 "(x, weight), so the bias gradient is never written and stays 0")
