"""Implementation modules of nnabla.parametric_functions and parameter files."""
