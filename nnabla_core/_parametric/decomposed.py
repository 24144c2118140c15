"""Low-rank parametric layers: SVD affine/convolution and CP (cpd3) convolution.

Each draws a full weight from its initializer (always, as nnabla does, even when the
factors already exist), factorizes it once when the factors are first created, and
registers the factors with ``set_parameter``. Under ``nn.seed`` the factors therefore
equal nnabla's up to floating-point rounding of the decomposition.
"""

import numpy as np

from .. import functions as F
from .._variable import Variable
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from ..parameter import get_parameter, get_parameter_or_create, set_parameter
from .api import as_list, flat_size, parametric_function_api


def _check_rank(api, r, limit=None):
    if r <= 0:
        raise ValueError(f"PF.{api}: argument 'r' is {r}; expected a rank larger than zero")
    if limit is not None and r > limit:
        raise ValueError(f"PF.{api}: argument 'r' is {r}; expected a rank of at most {limit} "
                         "(the smaller of the weight's input and output sizes)")


def _drawn(initializer, shape):
    """The full weight: a numpy array as given, else drawn from the initializer."""
    if type(initializer) is np.ndarray:  # exactly ndarray, as nnabla tests it
        return initializer
    return initializer(shape)


def _register(name, values):
    """Registers a new trainable parameter ``name`` holding ``values``."""
    param = Variable(values.shape, need_grad=True)
    param.d = values
    set_parameter(name, param)
    return param


def _trainable(param, fix_parameters):
    """``param`` itself, or an unlinked copy when its need_grad is not the wanted one."""
    if fix_parameters == param.need_grad:
        return param.get_unlinked_variable(need_grad=not fix_parameters)
    return param


def _bias(shape, b_init, fix_parameters, with_bias):
    if not with_bias:
        return None
    b_init = b_init if b_init is not None else ConstantInitializer()
    return get_parameter_or_create("b", shape, b_init, True, not fix_parameters)


@parametric_function_api("svd_affine", [
    ("U", "Left factor (singular values folded in)", "(inmaps, r)", True),
    ("V", "Right factor", "(r, outmaps)", True),
    ("b", "Bias vector", "(outmaps,)", True)])
def svd_affine(inp, n_outmaps, r, base_axis=1, uv_init=None, b_init=None,
               fix_parameters=False, rng=None, with_bias=True):
    """Low-rank affine layer: ``y = (x U) V + b``, a bottleneck of width ``r``.

    ``U`` and ``V`` come from the rank-``r`` truncated SVD of a full weight drawn from
    ``uv_init`` (or given as an array), with the singular values folded into ``U``.

    Args:
        inp (nnabla.Variable): Input, flattened from ``base_axis`` on.
        n_outmaps (int or tuple of int): Output neurons per sample.
        r (int): Rank (bottleneck width).
        base_axis (int): First flattened axis.
        uv_init (initializer or numpy.ndarray, optional): Full weight; Glorot uniform.
        b_init (initializer or numpy.ndarray, optional): Bias; zeros.
        fix_parameters (bool): If True, the parameters are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the default initializer.
        with_bias (bool): Whether a bias is used.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.

    Raises:
        ValueError: If the factors are created and ``r`` is not positive.
    """
    n_outmaps = as_list(n_outmaps)
    inmaps, outmaps = flat_size(inp.shape[base_axis:]), flat_size(n_outmaps)
    if uv_init is None:
        uv_init = UniformInitializer(calc_uniform_lim_glorot(inmaps, outmaps), rng=rng)
    uv = _drawn(uv_init, [inmaps] + n_outmaps)
    u, v = get_parameter("U"), get_parameter("V")
    if u is None or v is None:
        _check_rank("svd_affine", r, min(inmaps, outmaps))
        left, singular, right = np.linalg.svd(uv.reshape(inmaps, outmaps), full_matrices=False)
        u = _register("U", (left * singular)[:, :r])
        v = _register("V", right[:r].reshape([r] + n_outmaps))
    u, v = _trainable(u, fix_parameters), _trainable(v, fix_parameters)
    b = _bias(n_outmaps, b_init, fix_parameters, with_bias)
    return F.affine(F.affine(inp, u, None, base_axis), v, b, base_axis)


@parametric_function_api("svd_conv", [
    ("U", "Depthwise filters", "(inmaps * r, *kernel)", True),
    ("V", "Pointwise filters", "(outmaps, inmaps * r, 1, ...)", True),
    ("b", "Bias vector", "(outmaps,)", True)])
def svd_convolution(inp, outmaps, kernel, r, pad=None, stride=None, dilation=None,
                    uv_init=None, b_init=None, base_axis=1, fix_parameters=False, rng=None,
                    with_bias=True):
    """Low-rank convolution: a depthwise convolution (multiplier ``r``) then a 1x1 one.

    For each input map ``i`` the flattened kernels ``W[:, i, :]`` of a full filter bank
    drawn from ``uv_init`` are approximated by their rank-``r`` SVD ``U_i V_i``; ``U``
    holds the depthwise filters and ``V`` the 1x1 filters.

    Args:
        inp (nnabla.Variable): Input, channels at ``base_axis``.
        outmaps (int): Output channels.
        kernel (tuple of int): Kernel shape.
        r (int): Rank per input map.
        pad, stride, dilation (tuple of int, optional): Of the depthwise convolution.
        uv_init (initializer or numpy.ndarray, optional): Full filters; Glorot uniform.
        b_init (initializer or numpy.ndarray, optional): Bias; zeros.
        base_axis (int): First non-sample axis.
        fix_parameters (bool): If True, the parameters are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the default initializer.
        with_bias (bool): Whether a bias is used.

    Returns:
        nnabla.Variable: The output of the 1x1 ``F.convolution``.

    Raises:
        ValueError: If ``r`` is not positive.
    """
    _check_rank("svd_convolution", r)
    kernel = tuple(kernel)
    inmaps, taps = inp.shape[base_axis], flat_size(kernel)
    if uv_init is None:
        uv_init = UniformInitializer(calc_uniform_lim_glorot(inmaps, outmaps, kernel), rng=rng)
    uv = _drawn(uv_init, (outmaps, inmaps) + kernel).reshape(outmaps, inmaps, taps)
    u, v = get_parameter("U"), get_parameter("V")
    if u is None or v is None:
        depthwise = np.zeros((inmaps, r, taps))
        pointwise = np.zeros((inmaps, r, outmaps))
        for i in range(inmaps):
            left, singular, right = np.linalg.svd(uv[:, i, :].T, full_matrices=False)
            depthwise[i] = (left[:, :r] * singular[:r]).T
            pointwise[i] = right[:r]
        u = _register("U", depthwise.reshape((inmaps * r,) + kernel))
        v = _register("V", pointwise.transpose(2, 0, 1).reshape(
            (outmaps, inmaps * r) + (1,) * len(kernel)))
    u, v = _trainable(u, fix_parameters), _trainable(v, fix_parameters)
    b = _bias((outmaps,), b_init, fix_parameters, with_bias)
    y = F.depthwise_convolution(inp, u, None, base_axis=base_axis, pad=pad, stride=stride,
                                dilation=dilation, multiplier=r)
    return F.convolution(y, v, b, base_axis=base_axis, group=1)


@parametric_function_api("cpd3_conv", [
    ("I", "Input-map factor", "(r, inmaps, 1, ...)", True),
    ("K", "Kernel factor", "(r, *kernel)", True),
    ("O", "Output-map factor", "(outmaps, r, 1, ...)", True),
    ("b", "Bias vector", "(outmaps,)", True)])
def cpd3_convolution(inp, outmaps, kernel, r, pad=None, stride=None, dilation=None,
                     oik_init=None, b_init=None, base_axis=1, fix_parameters=False, rng=None,
                     with_bias=True, max_iter=500, stopping_criterion=1e-5, lambda_reg=0.0):
    """CP-decomposed convolution: 1x1 to ``r`` maps, depthwise ``kernel``, 1x1 to outputs.

    The full filter bank drawn from ``oik_init``, seen as an (outmaps, inmaps, taps)
    tensor, is approximated by ``r`` rank-one terms ``o (x) i (x) k`` found by alternating
    least squares (:func:`cp_als`, with ``rng``).

    Args:
        inp (nnabla.Variable): Input, channels at ``base_axis``.
        outmaps (int): Output channels.
        kernel (tuple of int): Kernel shape.
        r (int): Rank.
        pad, stride, dilation (tuple of int, optional): Of the depthwise convolution.
        oik_init (initializer or numpy.ndarray, optional): Full filters; Glorot uniform.
        b_init (initializer or numpy.ndarray, optional): Bias; zeros.
        base_axis (int): First non-sample axis.
        fix_parameters (bool): If True, the parameters are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the initializer and the ALS.
        with_bias (bool): Whether a bias is used.
        max_iter (int): Maximum ALS sweeps.
        stopping_criterion (float): Stop when the fit changes less; negative: never check.
        lambda_reg (float): L2 regularization of the ALS subproblems.

    Returns:
        nnabla.Variable: The output of the last 1x1 ``F.convolution``.

    Raises:
        ValueError: If the factors are created and ``r`` is not positive.
    """
    kernel = tuple(kernel)
    inmaps = inp.shape[base_axis]
    if oik_init is None:
        oik_init = UniformInitializer(calc_uniform_lim_glorot(inmaps, outmaps, kernel), rng=rng)
    oik = _drawn(oik_init, (outmaps, inmaps) + kernel)
    oik = oik.reshape(outmaps, inmaps, flat_size(kernel))
    o, i, k = get_parameter("O"), get_parameter("I"), get_parameter("K")
    if o is None or i is None or k is None:
        _check_rank("cpd3_convolution", r)
        factors, weights = cp_als(oik, r, max_iter, stopping_criterion, lambda_reg, rng)
        ones = (1,) * len(kernel)
        i = _register("I", factors[1].T.reshape((r, inmaps) + ones))
        o = _register("O", (factors[0] * weights).reshape((outmaps, r) + ones))
        k = _register("K", factors[2].T.reshape((r,) + kernel))
    o, i, k = (_trainable(p, fix_parameters) for p in (o, i, k))
    b = _bias((outmaps,), b_init, fix_parameters, with_bias)
    y = F.convolution(inp, i, None, base_axis=base_axis, group=1)
    y = F.depthwise_convolution(y, k, None, base_axis=base_axis, pad=pad, stride=stride,
                                dilation=dilation, multiplier=1)
    return F.convolution(y, o, b, base_axis=base_axis, group=1)


def cp_als(tensor, rank, max_iter=500, stopping_criterion=1e-5, lambda_reg=0.0, rng=None):
    """Canonical polyadic decomposition by alternating least squares (nnabla's variant).

    Factor ``n`` of ``tensor`` (``N``-D) solves its least-squares subproblem with the
    others fixed; the first sweep normalizes columns by their 2-norm, later sweeps by
    their maximum (at least 1). Factors 1.. start from ``rng.rand`` (default
    ``RandomState(313)``).

    Args:
        tensor (numpy.ndarray): Tensor to approximate.
        rank (int): Number of rank-one terms.
        max_iter (int): Maximum sweeps.
        stopping_criterion (float): Stop when the fit ``1 - |X - X'|^2 / |X|^2`` changes
            less than this; negative: run all sweeps.
        lambda_reg (float): Ridge term added to each subproblem's Gram matrix.
        rng (numpy.random.RandomState, optional): Generator of the start factors.

    Returns:
        tuple: ``(factors, weights)``: a list of ``(tensor.shape[n], rank)`` arrays and
        the ``(rank,)`` column weights, so ``tensor ~ sum_r weights[r] * outer(factors[:, r])``.

    Example:
        >>> import numpy as np
        >>> a, b, c = np.ones((2, 1)), np.arange(1., 4.)[:, None], np.ones((2, 1))
        >>> x = np.einsum("ir,jr,kr->ijk", a, b, c)
        >>> factors, weights = cp_als(x, 1)
        >>> bool(np.allclose(np.einsum("ir,jr,kr,r->ijk", *factors, weights), x))
        True
    """
    rng = rng if rng is not None else np.random.RandomState(313)
    ndim = tensor.ndim
    factors = [None] + [np.array(rng.rand(tensor.shape[n], rank), dtype=tensor.dtype)
                        for n in range(1, ndim)]
    squared_norm = np.sum(tensor ** 2)
    fit = 0
    for sweep in range(max_iter):
        previous_fit = fit
        for n in range(ndim):
            others = [m for m in range(ndim) if m != n]
            gram = 1.0
            for m in others:
                gram = gram * (factors[m].T @ factors[m])
            products = _khatri_rao([factors[m] for m in reversed(others)])
            solved = np.tensordot(tensor, products, axes=(others, list(range(ndim - 1))[::-1]))
            solved = solved @ np.linalg.pinv(gram + np.eye(rank) * lambda_reg)
            if sweep == 0:
                weights = np.sqrt((solved ** 2).sum(axis=0))
            else:
                weights = np.maximum(solved.max(axis=0), 1)
            factors[n] = solved / weights
        if stopping_criterion < 0:
            continue
        approx = np.einsum(_outer_subscripts(ndim), *factors, weights)
        residual = squared_norm + np.sum(approx ** 2) - 2 * np.sum(tensor * approx)
        fit = 1.0 - residual / squared_norm
        if sweep > 0 and abs(previous_fit - fit) < stopping_criterion:
            break
    return factors, weights


def _khatri_rao(matrices):
    """Column-wise outer products, kept as an ``(I_0, I_1, ..., rank)`` float64 array."""
    result = matrices[0]
    for matrix in matrices[1:]:
        result = result[..., None, :] * matrix
    return result.astype(np.float64)


def _outer_subscripts(ndim):
    """``"ar,br,cr,r->abc"`` for ``ndim`` factors."""
    letters = "abcdefghijklmnopq"[:ndim]
    return ",".join(f"{c}z" for c in letters) + ",z->" + letters
