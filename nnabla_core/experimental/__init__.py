"""Experimental tools of nnabla (``nnabla.experimental``): graph viewers, graph converters,
mixed-precision training and more, each in its own submodule."""
