"""Opposite batch-normalization folding (a BN *before* a convolution or affine) on small
graphs, run the same way on this package and on nnabla 1.39.

``tools/record_bn_opposite_folding.py`` runs :func:`run_case` for every case in
:data:`CASES` under nnabla 1.39 and writes
``tests/data/graph_converters/bn_opposite_folding.json``;
``tests/experimental/test_bn_opposite_folding.py`` runs it here and compares. Only the
public nnabla API is used, so the module imports under either package.

The batch normalizations get running statistics far from the identity (mean, variance,
gamma and beta drawn from a fixed generator), so a folding that drops one from a branch
shows in the output.
"""
import numpy as np

# name -> (input shape, graph builder name)
CASES = {
    # x -> BN -> conv -> ReLU: the BN's output has one reader, it folds into the conv
    # (no padding: with zero padding the shift of the border values cannot fold exactly)
    "chain_conv": ((2, 3, 6, 6), "chain_conv"),
    # x -> BN -> affine
    "chain_affine": ((2, 3, 4, 4), "chain_affine"),
    # x -> BN -> z; ReLU(z + conv(z)): the BN's output also feeds the residual Add2
    # (the `bn_opp_resblock` of nnabla's test_quantize.py `small_bn_opp_resnet`, with a
    # 1x1 kernel so that no padding is needed)
    "residual_fork": ((2, 3, 6, 6), "residual_fork"),
}


def _bn(nn, PF, h, name):
    return PF.batch_normalization(h, batch_stat=False, name=name)


def build(nn, F, PF, kind, x):
    """The float network of case ``kind`` on ``x``."""
    if kind == "chain_conv":
        h = _bn(nn, PF, x, "bn")
        return F.relu(PF.convolution(h, 4, (3, 3), name="conv"))
    if kind == "chain_affine":
        h = _bn(nn, PF, x, "bn")
        return PF.affine(h, 5, name="fc")
    if kind == "residual_fork":
        z = _bn(nn, PF, x, "bn")
        h = PF.convolution(z, 3, (1, 1), name="conv")
        return F.relu(z + h)
    raise ValueError(f"unknown case kind {kind!r}")


def _fill_parameters(nn, rng):
    params = nn.get_parameters(grad_only=False)
    for name in sorted(params):
        v = params[name]
        shape = v.shape
        if name.endswith("/var"):
            v.d = rng.uniform(0.5, 3.0, shape)
        elif name.endswith("/mean"):
            v.d = rng.uniform(-1.0, 1.0, shape)
        elif name.endswith("/gamma"):
            v.d = rng.uniform(0.5, 2.0, shape)
        elif name.endswith("/beta"):
            v.d = rng.uniform(-1.0, 1.0, shape)
        else:
            v.d = rng.randn(*shape) * 0.5
    return {k: params[k].d.copy() for k in sorted(params)}


def function_types(y):
    """Function type names of the graph of ``y`` in visit order."""
    types = []
    y.visit(lambda f: types.append(f.info.type_name))
    return types


def run_case(nn, F, PF, GC, name, seed=7):
    """Build case ``name``, fold its batch normalizations with
    ``BatchNormalizationFoldingModifier(opposite=True)``, and return the input, the
    parameters before the conversion (nnabla writes the folded values into the layer's own
    parameters), the output before and after, and the function types before and after."""
    shape, kind = CASES[name]
    nn.clear_parameters()
    rng = np.random.RandomState(seed)
    x_data = rng.randn(*shape).astype(np.float32)
    x = nn.Variable.from_numpy_array(x_data)
    y = build(nn, F, PF, kind, x)
    params = _fill_parameters(nn, rng)
    y.forward()
    before = y.d.copy()
    types_before = function_types(y)
    converter = GC.GraphConverter([GC.BatchNormalizationFoldingModifier(opposite=True)])
    yy = converter.convert(y)
    yy.forward()
    return {
        "x": x_data.tolist(),
        "params": {k: v.tolist() for k, v in params.items()},
        "output_before": before.tolist(),
        "output_after": yy.d.copy().tolist(),
        "types_before": types_before,
        "types_after": function_types(yy),
    }
