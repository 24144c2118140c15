"""Parametric normalization layers (batch, layer, instance, group, weight, spectral).

``beta`` starts at 0 and ``gamma`` at 1; running statistics ``mean`` (0) and ``var`` (1)
are registered with ``need_grad=False``. ``param_init`` maps a parameter name to an
initializer or a numpy array that replaces its default.
"""

from .. import functions as F
from ..initializer import (
    ConstantInitializer,
    NormalInitializer,
    WeightNormalizationScaleInitializer,
)
from ..parameter import get_parameter_or_create
from .api import as_list, get_or_create, parametric_function_api

_BETA_GAMMA = [("beta", "Trainable bias", "<see above>", True),
               ("gamma", "Trainable scale", "<see above>", True)]
_BN_PARAMS = _BETA_GAMMA + [("mean", "Running mean", "<see above>", False),
                            ("var", "Running variance", "<see above>", False)]


def _beta_gamma(shape, fix_parameters, param_init, no_bias, no_scale):
    """Creates ``beta`` then ``gamma`` (each skipped by its ``no_*`` flag)."""
    beta = gamma = None
    if not no_bias:
        beta = get_or_create("beta", shape, param_init.get("beta", ConstantInitializer(0)),
                             fix_parameters)
    if not no_scale:
        gamma = get_or_create("gamma", shape, param_init.get("gamma", ConstantInitializer(1)),
                              fix_parameters)
    return beta, gamma


def _bn_parameters(inp, axes, fix_parameters, param_init, no_scale, no_bias):
    """Creates beta, gamma, mean, var with the statistics shape of ``axes``."""
    shape = [1] * len(inp.shape)
    for axis in axes:
        shape[axis] = inp.shape[axis]
    param_init = param_init or {}
    beta, gamma = _beta_gamma(shape, fix_parameters, param_init, no_bias, no_scale)
    mean = get_parameter_or_create("mean", shape, param_init.get("mean", ConstantInitializer(0)),
                                   False)
    var = get_parameter_or_create("var", shape, param_init.get("var", ConstantInitializer(1)),
                                  False)
    return beta, gamma, mean, var


@parametric_function_api("bn", _BN_PARAMS)
def batch_normalization(inp, axes=[1], decay_rate=0.9, eps=1e-5, batch_stat=True,  # noqa: B006
                        output_stat=False, fix_parameters=False, param_init=None,
                        no_scale=False, no_bias=False):
    """Batch normalization with learned ``beta``/``gamma`` and running ``mean``/``var``.

    Parameters have the input's number of axes, with the input's size on ``axes`` and 1
    elsewhere (``(1, C, 1, 1)`` for NCHW and ``axes=[1]``).

    Args:
        inp (nnabla.Variable): Input.
        axes (list of int): Axes kept by the statistics (channels).
        decay_rate (float): Running statistics decay.
        eps (float): Added to the variance.
        batch_stat (bool): Normalize with batch statistics (training) or running ones.
        output_stat (bool): Also return the batch mean and variance.
        fix_parameters (bool): If True, beta/gamma are returned with need_grad=False.
        param_init (dict, optional): Initializers for ``beta``, ``gamma``, ``mean``, ``var``.
        no_scale (bool): Omit ``gamma``.
        no_bias (bool): Omit ``beta``.

    Returns:
        nnabla.Variable: Normalized output (and statistics if ``output_stat``).
    """
    beta, gamma, mean, var = _bn_parameters(inp, axes, fix_parameters, param_init, no_scale,
                                            no_bias)
    return F.batch_normalization(inp, beta, gamma, mean, var, axes=axes,
                                 decay_rate=decay_rate, eps=eps, batch_stat=batch_stat,
                                 output_stat=output_stat)


@parametric_function_api("bn", _BN_PARAMS)
def fused_batch_normalization(inp, z=None, axes=[1], decay_rate=0.9, eps=1e-5,  # noqa: B006
                              batch_stat=True, nonlinearity="relu", output_stat=False,
                              fix_parameters=False, param_init=None, no_scale=False,
                              no_bias=False):
    """Batch normalization fused with adding ``z`` and a ``nonlinearity``.

    Parameters as in :func:`batch_normalization`; ``z`` is an optional residual input.

    Returns:
        nnabla.Variable: The output of ``F.fused_batch_normalization``.
    """
    beta, gamma, mean, var = _bn_parameters(inp, axes, fix_parameters, param_init, no_scale,
                                            no_bias)
    return F.fused_batch_normalization(inp, beta, gamma, mean, var, z, axes=axes,
                                       decay_rate=decay_rate, eps=eps, batch_stat=batch_stat,
                                       nonlinearity=nonlinearity, output_stat=output_stat)


@parametric_function_api("bn", _BN_PARAMS)
def sync_batch_normalization(inp, comm, group="world", axes=[1], decay_rate=0.9,  # noqa: B006
                             eps=1e-5, batch_stat=True, output_stat=False,
                             fix_parameters=False, param_init=None, no_scale=False,
                             no_bias=False):
    """Batch normalization with statistics synchronized over ``comm``.

    Parameters as in :func:`batch_normalization`.

    Returns:
        nnabla.Variable: The output of ``F.sync_batch_normalization``.
    """
    beta, gamma, mean, var = _bn_parameters(inp, axes, fix_parameters, param_init, no_scale,
                                            no_bias)
    return F.sync_batch_normalization(inp, beta, gamma, mean, var, comm, group=group,
                                      axes=axes, decay_rate=decay_rate, eps=eps,
                                      batch_stat=batch_stat, output_stat=output_stat)


@parametric_function_api("mean_subtraction", [
    ("mean", "Running mean", "inp.shape[base_axis:]", False),
    ("t", "Minibatch counter", "(1,)", False)])
def mean_subtraction(inp, base_axis=1, update_running_mean=True, fix_parameters=False):
    """Subtracts a running mean of the samples (``mean`` and counter ``t``, no gradient).

    Returns:
        nnabla.Variable: The output of ``F.mean_subtraction``.
    """
    if len(inp.shape) < base_axis:
        raise ValueError(f"PF.mean_subtraction: argument 'base_axis' is {base_axis}; expected "
                         f"at most the input's {len(inp.shape)} axes")
    mean = get_parameter_or_create("mean", inp.shape[base_axis:], ConstantInitializer(0), False)
    t = get_parameter_or_create("t", (1,), ConstantInitializer(0), False)
    return F.mean_subtraction(inp, mean, t, base_axis=base_axis,
                              update_running_mean=update_running_mean)


@parametric_function_api("layer_normalization", _BETA_GAMMA)
def layer_normalization(inp, batch_axis=0, eps=1e-05, output_stat=False,
                        fix_parameters=False, param_init=None, no_scale=False, no_bias=False):
    """Layer normalization; ``beta``/``gamma`` have the input's shape with 1 on batch axes.

    Returns:
        nnabla.Variable: The output of ``F.layer_normalization``.
    """
    batch_axis = as_list(batch_axis)
    shape = list(inp.shape)
    for axis in batch_axis:
        shape[axis] = 1
    beta, gamma = _beta_gamma(shape, fix_parameters, param_init or {}, no_bias, no_scale)
    return F.layer_normalization(inp, beta, gamma, batch_axis=batch_axis, eps=eps,
                                 output_stat=output_stat)


def _channel_shape(inp, channel_axis):
    shape = [1] * len(inp.shape)
    shape[channel_axis] = inp.shape[channel_axis]
    return shape


@parametric_function_api("instance_normalization", _BETA_GAMMA)
def instance_normalization(inp, channel_axis=1, batch_axis=0, eps=1e-05, output_stat=False,
                           fix_parameters=False, param_init=None, no_scale=False,
                           no_bias=False):
    """Instance normalization; ``beta``/``gamma`` are per channel (1 on other axes).

    Returns:
        nnabla.Variable: The output of ``F.instance_normalization``.
    """
    shape = _channel_shape(inp, channel_axis)
    beta, gamma = _beta_gamma(shape, fix_parameters, param_init or {}, no_bias, no_scale)
    return F.instance_normalization(inp, beta, gamma, channel_axis=channel_axis,
                                    batch_axis=batch_axis, eps=eps, output_stat=output_stat)


@parametric_function_api("group_normalization", _BETA_GAMMA)
def group_normalization(inp, num_groups, channel_axis=1, batch_axis=0, eps=1e-05,
                        output_stat=False, fix_parameters=False, param_init=None,
                        no_scale=False, no_bias=False):
    """Group normalization; ``beta``/``gamma`` are per channel (1 on other axes).

    Returns:
        nnabla.Variable: The output of ``F.group_normalization``.
    """
    shape = _channel_shape(inp, channel_axis)
    beta, gamma = _beta_gamma(shape, fix_parameters, param_init or {}, no_bias, no_scale)
    return F.group_normalization(inp, beta, gamma, num_groups=num_groups,
                                 channel_axis=channel_axis, batch_axis=as_list(batch_axis),
                                 eps=eps, output_stat=output_stat)


@parametric_function_api("wn", [
    ("g", "Weight normalization scale", "w.shape[dim]", True)])
def weight_normalization(w, dim=0, eps=1e-12, g_init=None, fix_parameters=False):
    """Weight normalization of ``w`` with a learned scale ``g`` per slice of ``dim``.

    By default ``g`` starts at the norms of ``w`` so the result starts equal to ``w``.

    Returns:
        nnabla.Variable: The output of ``F.weight_normalization``.
    """
    dim %= len(w.shape)             # an axis of w (checked), counted from the front
    if g_init is None:
        g_init = WeightNormalizationScaleInitializer(w, dim, eps)
    g = get_or_create("g", (w.shape[dim],), g_init, fix_parameters)
    return F.weight_normalization(w, g, dim=dim, eps=eps)


@parametric_function_api("spectral-norm", [
    ("u", "Singular vector", "(w.shape[dim],)", False)])
def spectral_norm(w, dim=0, itr=1, eps=1e-12, test=False, u_init=None, fix_parameters=True):
    """Spectral normalization of ``w`` with a power-iteration vector ``u`` (no gradient).

    Returns:
        nnabla.Variable: The output of ``F.spectral_norm``.
    """
    if not 0 <= dim < len(w.shape):
        raise ValueError(f"PF.spectral_norm: argument 'dim' is {dim}; expected 0 <= dim < "
                         f"{len(w.shape)} (w.shape={tuple(w.shape)})")
    if u_init is None:
        u_init = NormalInitializer()
    u = get_parameter_or_create("u", (w.shape[dim],), u_init, False, False)
    return F.spectral_norm(w, u, dim=dim, itr=itr, eps=eps, test=test)


def _unit(x, eps):
    """``x`` divided by its L2 norm (with ``eps`` under the root)."""
    return x / (F.sum(x ** 2.0, keepdims=True) + eps) ** 0.5


@parametric_function_api("spectral-norm", [
    ("W_sn", "Spectral normalized weight", "w.shape", False),
    ("u", "Singular vector", "(w.shape[dim],)", False)])
def _spectral_norm_v1(w, dim=0, itr=1, eps=1e-12, test=False, u_init=None,
                      fix_parameters=True):
    """Spectral normalization built from elementary functions (nnabla's first version).

    The graph runs the power iteration with ``F.affine``, writes the new singular vector
    into the parameter ``u`` and the result into the parameter ``W_sn`` (both persistent
    outputs), and holds the iteration's vectors constant in backward, as
    ``F.spectral_norm`` does. With ``test=True`` it returns the parameter ``W_sn`` (what
    the last training-mode forward stored). ``PF.spectral_norm`` is the one-function
    version; this one serves as its reference.

    Args:
        w (nnabla.Variable): Weight; ``dim`` is its output axis.
        dim (int): Output axis, ``0 <= dim < w.ndim``.
        itr (int): Power-iteration steps (> 0).
        eps (float): Added under the square root of each norm (> 0).
        test (bool): Return the stored ``W_sn`` instead of computing it.
        u_init (nnabla.initializer.BaseInitializer or numpy.ndarray, optional): Initial
            ``u`` (default: standard normal).
        fix_parameters (bool): Unused (both parameters never take gradients).

    Returns:
        nnabla.Variable: The spectrally normalized weight, of ``w``'s shape.
    """
    shape = tuple(w.shape)
    if not isinstance(dim, int) or not 0 <= dim < len(shape):
        raise ValueError(f"PF._spectral_norm_v1: argument 'dim' is {dim!r}; expected an int "
                         f"with 0 <= dim < {len(shape)} (w.shape={shape})")
    if not isinstance(itr, int) or itr <= 0:
        raise ValueError(f"PF._spectral_norm_v1: argument 'itr' is {itr!r}; expected an int "
                         "> 0")
    if not eps > 0:
        raise ValueError(f"PF._spectral_norm_v1: argument 'eps' is {eps!r}; expected > 0")
    w_sn_param = get_parameter_or_create("W_sn", shape, ConstantInitializer(0), False, False)
    if u_init is None:
        u_init = NormalInitializer()
    u_param = get_parameter_or_create("u", (shape[dim],), u_init, False, False)
    if test:
        return w_sn_param
    rows = shape[dim]
    order = [dim] + [i for i in range(len(shape)) if i != dim]
    moved = F.transpose(w, order) if dim else w
    cols = 1
    for s in shape:
        cols *= s
    cols //= rows
    mat = F.reshape(moved, (rows, cols), inplace=False)          # (out, in)
    u = F.reshape(u_param, (1, rows), inplace=False)
    for _ in range(itr):
        v = F.reshape(_unit(F.affine(u, mat), eps), (cols, 1), inplace=False)   # mat^T u
        u = F.reshape(_unit(F.affine(mat, v), eps), (1, rows), inplace=False)   # mat v
    u = F.identity(F.reshape(u, (rows,), inplace=False), outputs=[u_param.data])
    u.persistent = True
    u.need_grad = False
    v.need_grad = False
    sigma = F.affine(F.reshape(u, (1, rows), inplace=False), F.affine(mat, v))   # u^T mat v
    w_sn = F.reshape(mat / sigma, tuple(shape[i] for i in order), inplace=False)
    if dim:
        w_sn = F.transpose(w_sn, [order.index(i) for i in range(len(shape))])
    w_sn = F.identity(w_sn, outputs=[w_sn_param.data])
    w_sn.persistent = True
    return w_sn
