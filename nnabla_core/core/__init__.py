"""``nnabla.core``: networks as data (:mod:`~nnabla.core.graph_def`) and modules
(:mod:`~nnabla.core.module`, :mod:`~nnabla.core.sequential`)."""
