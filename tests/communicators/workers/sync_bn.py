"""F.sync_batch_normalization over 2 processes (local batches of 2 and 4) equals
F.batch_normalization over the concatenated batch: outputs, running statistics, batch
statistics and every gradient; beta and gamma gradients are summed once (nnabla v1.32)."""
import numpy as np
from _common import communicator, data, done
from numpy.testing import assert_allclose

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF

comm, ctx = communicator()
r = comm.rank
ROWS = [slice(0, 2), slice(2, 6)]
X = data(0, (6, 3, 2, 2)) * 3 + 1
DY, DM, DV = data(1, (6, 3, 2, 2)), [data(2 + q, (1, 3, 1, 1)) for q in (0, 1)], \
    [data(4 + q, (1, 3, 1, 1)) for q in (0, 1)]
BETA, GAMMA = data(6, (1, 3, 1, 1)), data(7, (1, 3, 1, 1)) + 2


def run(x_np, dy, dm, dv, comm=None):
    v = {k: nn.Variable.from_numpy_array(a, need_grad=True)
         for k, a in (("x", x_np), ("b", BETA), ("g", GAMMA))}
    rm = nn.Variable.from_numpy_array(np.full((1, 3, 1, 1), 0.5, np.float32))
    rv = nn.Variable.from_numpy_array(np.full((1, 3, 1, 1), 2.0, np.float32))
    args = (v["x"], v["b"], v["g"], rm, rv)
    if comm is None:
        y, m, var = F.batch_normalization(*args, output_stat=True)
    else:
        y, m, var = F.sync_batch_normalization(*args, comm, output_stat=True)
    loss = F.sum(y * nn.Variable.from_numpy_array(dy)) + F.sum(
        m * nn.Variable.from_numpy_array(dm)) + F.sum(var * nn.Variable.from_numpy_array(dv))
    loss.forward()
    loss.backward()
    return {"y": y.d, "m": m.d, "v": var.d, "rm": rm.d, "rv": rv.d,
            **{f"d{k}": a.g for k, a in v.items()}}, v


ref, _ = run(X, DY, DM[0] + DM[1], DV[0] + DV[1])
got, leaves = run(X[ROWS[r]], DY[ROWS[r]], DM[r], DV[r], comm)
for key in ("y", "dx"):
    assert_allclose(got[key], ref[key][ROWS[r]], rtol=1e-5, atol=1e-5, err_msg=key)
for key in ("m", "v", "rm", "rv"):
    assert_allclose(got[key], ref[key], rtol=1e-5, atol=1e-6, err_msg=key)
# beta/gamma: local gradients, summed once by the data-parallel all_reduce
local = {k: got[k].copy() for k in ("db", "dg")}
comm.all_reduce([leaves["b"].grad, leaves["g"].grad])
for key, name in (("db", "b"), ("dg", "g")):
    assert_allclose(leaves[name].g, ref[key], rtol=1e-5, atol=1e-5, err_msg=key)
    assert not np.allclose(local[key], ref[key], rtol=1e-3), key   # each rank's part differs
    # the definition before v1.32 all-reduced them inside backward too: twice the sum
    assert np.abs(leaves[name].g - 2 * ref[key]).max() > 0.1 * np.abs(ref[key]).max(), key

# PF.sync_batch_normalization: the same numbers through the parametric function
with nn.parameter_scope("pf"):
    x = nn.Variable.from_numpy_array(X[ROWS[r]])
    y = PF.sync_batch_normalization(x, comm, decay_rate=0.5)
    y.forward()
    x_ref = nn.Variable.from_numpy_array(X)
with nn.parameter_scope("pf_ref"):
    y_ref = PF.batch_normalization(x_ref, decay_rate=0.5)
    y_ref.forward()
assert_allclose(y.d, y_ref.d[ROWS[r]], rtol=1e-5, atol=1e-5)
stats = nn.get_parameters(grad_only=False)
for name in ("mean", "var"):
    assert_allclose(stats[f"pf/bn/{name}"].d, stats[f"pf_ref/bn/{name}"].d, rtol=1e-5,
                    atol=1e-6)
done(comm)
