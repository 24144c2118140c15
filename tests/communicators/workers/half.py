"""A communicator of a half context (type_config='half') sums float16 arrays as nnabla's NCCL
communicator does in half precision: each rank's term rounded to float16 after scale_grad
(float32 product), multiplied by float16(1/n) and rounded again when dividing (ncclAvg),
the sum rounded to float16 once (NCCL's float16 addition of two terms). The reference below
is that numpy formula, the sum taken exactly in float64; results must be bit-equal, through
all_reduce (packed and inplace, forecast or not) and all_reduce_callback during backward.
Values span float16's range: subnormals, where dividing loses bits, and large values."""
import numpy as np
from _common import done
from numpy.testing import assert_array_equal

import nnabla as nn
import nnabla.communicators as C
import nnabla.functions as F
from nnabla.ext_utils import get_extension_context

ctx = get_extension_context("cpu", type_config="half")
comm = C.MultiProcessCommunicator(ctx)
comm.init()
nn.set_default_context(ctx)
r, n = comm.rank, comm.size
F16, F32 = np.float16, np.float32


def values(rank, salt, size=4000):
    """float16 values of ``rank``: normal, tiny (subnormal) and large magnitudes."""
    rng = np.random.RandomState(100 * salt + rank)
    scale = 10.0 ** rng.uniform(-7.5, 4.0, size)
    return (rng.randn(size) * scale).astype(F16)


def want(salt, division, scale=1.0, size=4000):
    terms = []
    for q in range(n):
        term = values(q, salt, size)
        if scale != 1.0:
            term = (term.astype(F32) * F32(scale)).astype(F16)
        if division:
            term = (term.astype(F32) * F32(F16(F32(1.0 / n)))).astype(F16)
        terms.append(term.astype(np.float64))
    return sum(terms).astype(F16)


# all_reduce, packed (repeated: the later calls ride a forecast) and inplace
for inplace in (False, True):
    for division in (False, True):
        arrays = [nn.NdArray.from_numpy_array(values(r, 1)[:1000]),
                  nn.NdArray.from_numpy_array(values(r, 1)[1000:])]
        for step in range(6):
            for a, v in zip(arrays, (values(r, 1)[:1000], values(r, 1)[1000:])):
                a.data = v
            comm.all_reduce(arrays, division=division, inplace=inplace)
            got = np.concatenate([a.data for a in arrays])
            assert got.dtype == F16
            assert_array_equal(got, want(1, division))
# the division's rounding is nnabla's: it differs from dividing the sum for some values
assert (want(1, True) != (want(1, False).astype(np.float64) / n).astype(F16)).any()

# all_reduce_callback during backward: float16 gradients (the half kernels'), scale_grad
# and division as in a training step
size = 3000
w = nn.Variable.from_numpy_array(values(r, 2, size))
x = nn.Variable((size,), need_grad=True)
x.d = 1
loss = F.sum(F.mul2(x, w))           # d loss / dx = w
for scale_grad in (1.0, 0.1):
    for division in (False, True):
        loss.forward()
        x.grad.zero()
        callback = comm.all_reduce_callback([x.grad], 1024, division=division,
                                            scale_grad=scale_grad)
        loss.backward(communicator_callbacks=callback)
        assert x.g.dtype == F16
        assert_array_equal(x.g, want(2, division, scale_grad, size))
assert (want(2, False, 0.1, size) != (want(2, False, size=size).astype(F32)
                                      * F32(0.1)).astype(F16)).any()
done(comm)
