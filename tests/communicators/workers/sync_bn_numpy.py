"""F.sync_batch_normalization / PF.sync_batch_normalization over 2 processes against numpy
formulas of batch normalization over the combined batch (float64), in both layouts.

1. axes=[1] and axes=[3] (channel last), local batches of 2 and 3 rows, output_stat with
   different gradients flowing into each rank's batch mean and variance: y, the batch
   statistics, the running statistics (unbiased variance of the combined batch), and the
   gradient of x, which is the gradient of the sum of both ranks' objectives (the objective
   the data-parallel all_reduce of parameter gradients sums); beta/gamma gradients local.
   nnabla 1.39 adds only the rank's own gradient of the mean/variance to x's gradient
   (README, Deliberate differences): assert that ours differs from that rule.
2. Channel first vs channel last through PF.sync_batch_normalization on a batch large enough
   that a float32 sum's rounding depends on the layout: with dy = 1, gamma's gradient is a
   sum of x - mean, values that cancel, so only a layout-independent (float64) sum makes
   both layouts agree (nnabla's own consistency test checks this).
"""
import numpy as np
from _common import communicator, data, done
from numpy.testing import assert_allclose

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF

comm, ctx = communicator()
r = comm.rank
EPS, DECAY = 1e-5, 0.9
ROWS = [slice(0, 2), slice(2, 5)]
C = 3


def stat(a, keep):
    return a.sum(axis=tuple(i for i in range(a.ndim) if i != keep), keepdims=True)


def reference(x, dy, dm, dv, beta, gamma, rm, rv, keep):
    """numpy float64: y, mean, var, running mean/var and the gradients of
    J = sum_q [sum(dy_q * y_q) + sum(dm_q * mean) + sum(dv_q * var)] over the ranks q."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    n = x.size // x.shape[keep]
    mean = stat(x, keep) / n
    xc = x - mean
    var = stat(xc * xc, keep) / n
    inv = 1 / np.sqrt(var + EPS)
    y = xc * inv * gamma + beta
    dm_all, dv_all = sum(dm), sum(dv)     # each rank's objective uses the shared statistics
    g = gamma * inv
    dx = (g * dy - g * stat(dy, keep) / n - g * inv * inv * xc * stat(dy * xc, keep) / n
          + dm_all / n + 2 * xc * dv_all / n)
    return {"y": y, "m": mean, "v": var, "rm": DECAY * rm + (1 - DECAY) * mean,
            "rv": DECAY * rv + (1 - DECAY) * var * n / (n - 1), "dx": dx,
            "inv": inv, "xc": xc}


def check_function(keep):
    shape = [5, C, 4, 2] if keep == 1 else [5, 4, 2, C]
    sshape = [1] * 4
    sshape[keep] = C
    x = data(0, shape, salt=10 + keep) * 2 + 1
    x[2:] += 0.5                                     # the ranks' batches differ in mean
    dy = data(1, shape, salt=10 + keep)
    dm = [data(q, sshape, salt=20 + keep) for q in (0, 1)]
    dv = [data(q, sshape, salt=30 + keep) for q in (0, 1)]
    beta, gamma = data(0, sshape, salt=40 + keep), data(1, sshape, salt=40 + keep) + 2
    rm0, rv0 = np.full(sshape, 0.5, np.float32), np.full(sshape, 2.0, np.float32)
    ref = reference(x, dy, dm, dv, beta, gamma, rm0, rv0, keep)

    v = {k: nn.Variable.from_numpy_array(a, need_grad=True)
         for k, a in (("x", x[ROWS[r]]), ("b", beta), ("g", gamma))}
    rm, rv = nn.Variable.from_numpy_array(rm0), nn.Variable.from_numpy_array(rv0)
    y, m, var = F.sync_batch_normalization(v["x"], v["b"], v["g"], rm, rv, comm,
                                           axes=[keep], decay_rate=DECAY, eps=EPS,
                                           batch_stat=True, output_stat=True)
    const = nn.Variable.from_numpy_array
    loss = F.sum(y * const(dy[ROWS[r]])) + F.sum(m * const(dm[r])) + F.sum(var * const(dv[r]))
    loss.forward()
    loss.backward()
    for key, got, tol in (("y", y.d, 1e-5), ("m", m.d, 1e-6), ("v", var.d, 1e-5),
                          ("rm", rm.d, 1e-6), ("rv", rv.d, 1e-5)):
        want = ref[key][ROWS[r]] if key == "y" else ref[key]
        assert_allclose(got, want, rtol=1e-5, atol=tol, err_msg=f"{key} axes=[{keep}]")
    assert_allclose(v["x"].g, ref["dx"][ROWS[r]], rtol=1e-4, atol=1e-5,
                    err_msg=f"dx axes=[{keep}]")
    # nnabla 1.39's rule: only this rank's dm/dv reach its x (differs by the other rank's)
    other = 1 - r
    nnabla_rule = ref["dx"][ROWS[r]] - (dm[other] + 2 * ref["xc"][ROWS[r]] * dv[other]) / 5
    assert np.abs(v["x"].g - nnabla_rule).max() > 1e-2, "dx follows nnabla's local rule"
    # beta/gamma: this rank's rows only (v1.32), summed once by the data-parallel all_reduce
    lo = dy[ROWS[r]].astype(np.float64)
    assert_allclose(v["b"].g, stat(lo, keep), rtol=1e-5, atol=1e-5, err_msg="db local")
    assert_allclose(v["g"].g, stat(lo * ref["xc"][ROWS[r]] * ref["inv"], keep),
                    rtol=1e-5, atol=1e-5, err_msg="dg local")
    comm.all_reduce([v["b"].grad, v["g"].grad])
    xhat = ref["xc"] * ref["inv"]
    assert_allclose(v["b"].g, stat(dy.astype(np.float64), keep), rtol=1e-5, atol=1e-5)
    assert_allclose(v["g"].g, stat(dy * xhat, keep), rtol=1e-5, atol=1e-5)


def check_layouts():
    # 8 * 64 * 64 values per channel and rank: large enough that float32 sums of the two
    # layouts round differently by far more than the tolerance (checked below)
    shape_f = (8, 4, 64, 64)
    layout = (0, 2, 3, 1)
    x = data(0, shape_f, salt=50)                    # the same rows on both ranks
    xs = {"f": x, "l": x.transpose(layout).copy()}
    out = {}
    for name, axes in (("f", [1]), ("l", [3])):
        with nn.parameter_scope(f"layout_{name}"):
            xv = nn.Variable.from_numpy_array(xs[name], need_grad=True)
            y = PF.sync_batch_normalization(xv, comm, axes=axes, decay_rate=DECAY, eps=EPS)
            params = nn.get_parameters(grad_only=False)
        for p in params.values():
            p.grad.zero()
        xv.grad.zero()
        y.forward(clear_no_need_grad=True)
        y.backward(clear_buffer=True)
        out[name] = {"dx": xv.g.copy(), **{k.split("/")[-1]: (p.d.copy(), p.g.copy())
                                           for k, p in params.items()}}
    assert_allclose(out["f"]["dx"].transpose(layout), out["l"]["dx"], rtol=1e-5, atol=1e-6)
    for k in ("beta", "gamma", "mean", "var"):
        for i, what in ((0, "data"), (1, "grad")):
            if k in ("mean", "var") and i == 1:
                continue
            assert_allclose(out["f"][k][i].transpose(layout), out["l"][k][i], rtol=1e-5,
                            atol=1e-6, err_msg=f"{k} {what}")
    # gamma's gradient: the float64 sum of the float32 values x - mean (mean rounded to
    # float32), times inv_std; nearly 0 (x is the same on both ranks, so the local mean is
    # the global one)
    x64 = x.astype(np.float64)
    mean32 = (stat(x64, 1) / (x.size // 4)).astype(np.float32)
    xc32 = x - mean32
    var = stat(xc32.astype(np.float64) ** 2, 1) / (x.size // 4)
    want = stat(xc32.astype(np.float64), 1) / np.sqrt(var + EPS)
    assert_allclose(out["f"]["gamma"][1], want, rtol=1e-5, atol=1e-7)
    # ... which a float32 sum gets wrong by more than the tolerance in one of the layouts
    naive = [np.einsum("abcd->b", xc32), np.einsum("abcd->d", xc32.transpose(layout))]
    assert max(np.abs(s - want.reshape(-1)).max() for s in naive) > 1e-5, naive


check_function(1)
check_function(3)
check_layouts()
done(comm)
