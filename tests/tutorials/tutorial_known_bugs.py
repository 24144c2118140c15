"""Reasons of the tutorial tests marked ``xfail``: framework bugs and missing features."""

IMPERATIVE_PF_BUG = ("a function given an NdArray and Variables (PF.affine(NdArray) with its "
                     "parameter Variables) builds a graph and returns a Variable; nnabla runs it "
                     "at once and returns an NdArray ('at least one NdArray' rule)")
