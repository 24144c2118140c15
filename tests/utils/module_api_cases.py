"""Module API scenarios (``nn.Module``, ``nn.Sequential``, ``nnabla.core.modules``) run the
same way on this package and on nnabla 1.39.

``tools/record_module_api.py`` runs :func:`run_cases` under nnabla 1.39 and writes
``tests/data/module_api/reference.json``; ``tests/utils/test_toolkit_modules.py`` runs it
here and compares. Only the public nnabla API is used.
"""
import numpy as np


def run_cases(nn, F, PF, modules):
    """Parameter names and shapes (all and ``grad_only``), output shapes, ``len`` and names
    of a Sequential of two affine modules and of a strided ResUnit, and the Sequential's
    output for fixed parameters and input."""

    class Fc(nn.Module):
        def __init__(self, n):
            self.n = n

        def call(self, x):
            return F.relu(PF.affine(x, self.n))

    nn.clear_parameters()
    rng = np.random.RandomState(3)
    seq = nn.Sequential(Fc(4), ("head", Fc(2)))
    x = nn.Variable.from_numpy_array(rng.randn(3, 5).astype(np.float32))
    y = seq(x)
    params = seq.get_parameters()
    for key in sorted(params):
        params[key].d = rng.randn(*params[key].shape)
    y.forward()
    unit = modules.ResUnit(8, stride=2)
    y2 = unit(nn.Variable((2, 4, 6, 6)))

    def shapes(p):
        return [[k, list(v.shape)] for k, v in p.items()]

    return {
        "sequential": {"params": shapes(params), "len": len(seq), "name": seq.name,
                       "output_shape": list(y.shape),
                       "x": x.d.tolist(),
                       "param_values": {k: params[k].d.tolist() for k in sorted(params)},
                       "output": y.d.tolist()},
        "res_unit": {"params": shapes(unit.get_parameters()),
                     "grad_only": shapes(unit.get_parameters(grad_only=True)),
                     "name": unit.name, "output_shape": list(y2.shape)},
    }
