"""More normalization: spectral normalization and synchronized batch normalization.

``SpectralNorm`` updates its power-iteration vector ``u`` in place when
``test=False`` (``mutates``); ``SyncBatchNormalization`` takes a communicator
argument and, within one process, is batch normalization.
"""
from __future__ import annotations

from .args import check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output
from .normalization import BN_ARGS, Y_STATS, _resolver, batch_normalization

CATEGORY = "Normalization"


def spectral_norm(spec, w, u, *, dim, itr, eps, test, output_u):
    d = check_axis(spec, "dim", dim, len(w))
    if tuple(u) != (w[d],):
        raise spec.shape_error("u", f"({w[d]},): w.shape[dim] with dim={dim}", u,
                               why=f"w has shape {tuple(w)}")
    if itr < 1:
        raise spec.value_error("itr", "a positive number of power iterations", itr)
    if eps <= 0:
        raise spec.value_error("eps", "a positive value", eps)
    return (tuple(w), tuple(u)) if output_u else (tuple(w),)


def sync_batch_normalization(spec, x, beta, gamma, mean, variance, *, comm, group, axes,
                             decay_rate, eps, batch_stat, n_outputs=-1):
    return batch_normalization(spec, x, beta, gamma, mean, variance, axes=axes,
                               decay_rate=decay_rate, eps=eps, batch_stat=batch_stat,
                               n_outputs=n_outputs)


SPECS = [
    FunctionSpec(
        "SpectralNorm", "spectral_norm", CATEGORY, (Input("w"), Input("u", parameter=True)),
        (Arg("dim", "int", 0), Arg("itr", "int", 1), Arg("eps", "float", 1e-12),
         Arg("test", "bool", False), Arg("output_u", "bool", False)),
        (Output("w_sn"), Output("u")), spectral_norm, Needs(inputs=("w",)),
        doc="w / sigma(w), sigma by `itr` power iterations from u (updated in place unless "
            "test); the gradient treats the singular vectors as constants, as nnabla.",
        mutates=("u",)),
    FunctionSpec(
        "SyncBatchNormalization", "sync_batch_normalization", CATEGORY,
        (Input("x"), Input("beta", parameter=True), Input("gamma", parameter=True),
         Input("mean", parameter=True), Input("variance", parameter=True)),
        (Arg("comm", "any"), Arg("group", "str", "world", ("world",))) + BN_ARGS,
        Y_STATS, sync_batch_normalization, Needs(inputs=("x", "gamma", "mean", "variance")),
        doc="Batch normalization with statistics over every process of `comm`; in one "
            "process it is batch_normalization.",
        mutates=("mean", "variance"), resolve_args=_resolver("axes")),
]
