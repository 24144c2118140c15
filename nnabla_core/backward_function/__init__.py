"""Backward functions of nnabla's functions, one module per category.

Each module defines ``BACKWARDS = {type_name: backward}``; a backward takes
``(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args)`` (all
Variables are graph variables) and returns one gradient Variable (or None) per
input, built from ``nnabla.functions`` so that it can be differentiated again.
"""
