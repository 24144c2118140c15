"""The backend test kit: run the function cases, the solver rules and nnabla's graph semantics
against a named backend.

Every check runs in the backend's context with strict fallback on, so a function the backend
lacks fails to resolve instead of passing quietly on the CPU:

- each function :class:`~nnabla.testing.function_cases.Case` whose function the backend has
  a kernel for: static forward against the case's numpy reference (against the CPU backend's
  output when the case has none); backward (engine gradients for a random output gradient)
  against the CPU backend's gradients for the same inputs; and ``accum`` (a second backward
  adds to the leaves' gradients). A case whose arguments the kernel declines (``accepts``)
  is skipped and its reason reported;
- each solver rule the backend registers: a few steps on random parameters and gradients,
  with ``weight_decay``, ``clip_grad_by_norm``, ``scale_grad`` and the inf/nan checks,
  against the CPU rule with the same hyper-parameters;
- graph semantics: gradient accumulation on leaves, ``clear_buffer``/``clear_no_need_grad``,
  auto-forward, ``nn.grad``, ``recompute`` and in-place running statistics.

Functions without a kernel are listed as not implemented, never as failures.

Under ``type_config='half'`` results are compared element by element, as the function suite
compares half with float: ``|half - expected| <= half_rtol (|expected| + floor)``, the floor
being ``half_floor_ratio`` times the largest ``|expected|`` of that array (it absorbs
cancellation next to zero); the case's ``half_rtol`` and ``half_floor_ratio`` for functions,
:data:`GRAPH_HALF_RTOL` and :data:`HALF_FLOOR_RATIO` for the graph checks (solver rules
keep float32 tolerances).

Example:
    >>> from nnabla.testing.backend_kit import check_backend
    >>> report = check_backend("cpu", functions=["ReLU"], solvers=False, graph=False)
    >>> report.names("passed")
    ['ReLU']

Command line: ``python -m nnabla.testing.backend_kit NAME [--type-config half]
[--functions Affine ReLU] [--no-solvers] [--no-graph]`` prints the report and exits 1 on a
failure.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

import nnabla as nn
import nnabla.function_bases as FB
import nnabla.solvers as S
from nnabla._state import STATE
from nnabla.array_family import HOST_FAMILY
from nnabla.ext_utils import get_extension_context, set_strict_fallback
from nnabla.function_spec import SPECS, bind_args, infer
from nnabla.kernel import declines_some_arguments
from nnabla.plugins import REGISTRY
from nnabla.testing.function_cases import ALL_CASES
from nnabla.testing.graph_semantics import GRAPH_CHECKS

__all__ = ["check_backend", "Report", "Result", "main"]

PASSED, FAILED, NOT_IMPLEMENTED = "passed", "failed", "not implemented"
SOLVER_STEPS = 3
REFERENCE = HOST_FAMILY     # the backend compared against: the CPU's, named after its family
GRAPH_HALF_RTOL = 2e-2      # half_rtol of the graph-semantics checks (several functions deep)
HALF_FLOOR_RATIO = 0.1      # as Case.half_floor_ratio's default


@dataclass
class Result:
    """The outcome of one function (all its cases), solver or graph check."""
    kind: str            # 'function', 'solver' or 'graph'
    name: str
    status: str          # PASSED, FAILED or NOT_IMPLEMENTED
    message: str = ""
    cases: int = 0       # the cases run (functions)


@dataclass
class Report:
    """What :func:`check_backend` found: one :class:`Result` per function, solver and check."""
    backend: str
    type_config: str
    results: list = field(default_factory=list)

    def names(self, status, kind="function"):
        """Names of the ``kind`` results with ``status``, sorted."""
        return sorted(r.name for r in self.results if r.status == status and r.kind == kind)

    @property
    def failed(self):
        return [r for r in self.results if r.status == FAILED]

    @property
    def passed(self):
        return [r for r in self.results if r.status == PASSED]

    @property
    def not_implemented(self):
        return [r for r in self.results if r.status == NOT_IMPLEMENTED]

    def summary(self):
        """One line: the counts per kind and status."""
        parts = []
        for kind, label in (("function", "functions"), ("solver", "solvers"),
                            ("graph", "graph checks")):
            counts = [len(self.names(s, kind)) for s in (PASSED, FAILED, NOT_IMPLEMENTED)]
            parts.append(f"{label}: {counts[0]} passed, {counts[1]} failed, "
                         f"{counts[2]} not implemented")
        return f"{self.backend}:{self.type_config}: " + "; ".join(parts)

    def table(self):
        """The report as a text table (messages shortened to one line), then the summary."""
        width = max([len(r.name) for r in self.results] + [4])
        rows = [f"{'kind':9} {'name':{width}} {'status':16} {'cases':>5}  message"]
        for r in self.results:
            message = " ".join(r.message.split())
            rows.append(f"{r.kind:9} {r.name:{width}} {r.status:16} {r.cases:5}  "
                        f"{message[:100]}")
        return "\n".join(rows + [self.summary()])

    def raise_on_failure(self):
        """Raise ``AssertionError`` naming every failure with its message."""
        if self.failed:
            details = "\n\n".join(f"{r.kind} {r.name}:\n{r.message}" for r in self.failed)
            raise AssertionError(f"backend {self.backend}:{self.type_config} failed "
                                 f"{len(self.failed)} checks:\n{details}")


def check_backend(name, *, functions=None, type_config="float", solvers=True, graph=True):
    """Check backend ``name`` against the function cases, the CPU solver rules and the graph
    semantics, in ``get_extension_context(name, type_config=type_config)`` with strict
    fallback (the previous setting is restored). Stochastic functions reseed nnabla's function
    generator (``nn.seed``), so both backends draw the same numbers.

    Args:
        name (str): the backend, as in a context string (``'cuda'``).
        functions (list of str): function type names to check (default: every function with
            a case).
        type_config (str): ``'float'`` or ``'half'``.
        solvers (bool): check the solver rules the backend registers.
        graph (bool): check the graph semantics.

    Returns:
        Report

    Raises:
        ValueError: the backend is not available, or ``functions`` names an unknown function.
    """
    REGISTRY.activate(name)
    kernels = REGISTRY.kernels.get((name, type_config), {})
    contexts = (get_extension_context(name, type_config=type_config),
                get_extension_context(REFERENCE, type_config=type_config))
    report = Report(name, type_config)
    was_strict = STATE.strict_fallback
    set_strict_fallback(True)
    try:
        for fname, cases in _cases_by_function(functions).items():
            report.results.append(_check_function(fname, cases, kernels, contexts))
        if solvers:
            for sname in sorted(REGISTRY.solver_rules.get(name, {})):
                report.results.append(_outcome("solver", sname, _check_solver, sname, contexts))
        if graph:
            for gname, (needs, check) in GRAPH_CHECKS.items():
                report.results.append(_graph_result(gname, needs, check, kernels, contexts))
    finally:
        set_strict_fallback(was_strict)
    return report


def _cases_by_function(functions):
    unknown = sorted(set(functions or ()) - set(SPECS))
    if unknown:
        raise ValueError(f"check_backend: argument 'functions' names unknown functions "
                         f"{unknown}; expected type names such as 'Affine'")
    by_name = defaultdict(list)
    for case in ALL_CASES:
        if functions is None or case.name in functions:
            by_name[case.name].append(case)
    return dict(sorted(by_name.items()))


def _outcome(kind, name, check, *args):
    """Run ``check(*args)``: a :class:`Result` that passed, or failed with the error."""
    try:
        check(*args)
        return Result(kind, name, PASSED)
    except Exception as e:  # noqa: BLE001 - a broken backend is reported, not raised
        return Result(kind, name, FAILED, _describe(e))


def _describe(error):
    return f"{type(error).__name__}: {error}"


# -- functions ------------------------------------------------------------------------------
def _check_function(name, cases, kernels, contexts):
    """All cases of function ``name``: one Result."""
    if name not in kernels:
        return Result("function", name, NOT_IMPLEMENTED, "no kernel")
    failures, declined, ran = [], [], 0
    for case in cases:
        reason = _declines(kernels[name], case)
        if reason is not None:
            declined.append(f"{case}: declined: {reason}")
            continue
        ran += 1
        try:
            _check_case(case, contexts)
        except Exception as e:  # noqa: BLE001 - a broken kernel is reported, not raised
            failures.append(f"{case}: {_describe(e)}")
    notes = "\n".join(failures + declined)
    if failures:
        return Result("function", name, FAILED, notes, ran)
    return Result("function", name, PASSED if ran else NOT_IMPLEMENTED, notes, ran)


def _declines(kernel, case):
    """The reason the kernel declines the case's arguments, or None (as the resolver asks)."""
    if not declines_some_arguments(kernel):
        return None
    spec = SPECS[case.name]
    arrays = _flat(case.make_inputs()) if not spec.variadic_input else case.make_inputs()[0]
    in_shapes = [None if a is None else tuple(a.shape) for a in arrays]
    args, _ = infer(spec, in_shapes, bind_args(spec, case.args))
    return kernel.accepts(args)


def _check_case(case, contexts):
    ctx, cpu = contexts
    half = ((case.half_rtol, case.half_floor_ratio) if ctx.backend[0].endswith(":half")
            else None)
    arrays = case.make_inputs()
    xs, ys = _run(case, arrays, ctx)
    cxs, cys = _run(case, arrays, cpu)
    expected = _reference(case, arrays) if case.ref is not None else [y.d for y in cys]
    for i, (y, e) in enumerate(zip(ys, expected)):
        if half is not None and not case.half:
            break                     # the case says why half differs (``why_loose``)
        if case.check_outputs is None or i in case.check_outputs:
            _close(y.d, e, case.atol, case.rtol, f"output {i}", half)
    _check_forward_ufunc(case, ys)
    if not case.grad:
        return
    rng = np.random.RandomState(1)
    dys = [np.asarray(rng.randn(*y.shape), np.float32) for y in ys]
    once = _backward(xs, ys, dys, ctx)
    twice = _backward(xs, ys, dys, ctx, zero=False)
    cpu_grads = _backward(cxs, cys, dys, cpu)
    for i in _grad_positions(case, xs):
        what = f"gradient of input {i}"
        _close(once[i], cpu_grads[i], case.grad_atol, case.grad_rtol,
               what + " (against the CPU backend)", half)
        _close(twice[i], 2 * once[i], case.grad_atol, case.grad_rtol,
               what + " after a second backward (accum: leaves must add)", half)


def _check_forward_ufunc(case, ys):
    """A kernel declaring ``forward_ufunc`` (the graph ran it instead of ``forward``): its
    ``forward`` on the same input gives the same output, bit for bit."""
    f = ys[0].parent if len(ys) == 1 else None
    declared = None if f is None or f.python else getattr(f.kernel, "forward_ufunc", None)
    if declared is None:
        return
    fam, node = f.family, f.in_nodes[0]
    x = node.data.get(f.in_dtypes[0] or node.data.dtype, fam)
    by_forward = fam.to_numpy(f.kernel.forward([x])[0])
    by_ufunc = fam.to_numpy(declared[0](x, *declared[1:]))
    if by_forward.tobytes() != by_ufunc.tobytes() or by_forward.dtype != by_ufunc.dtype:
        raise AssertionError(f"{type(f.kernel).__name__}.forward_ufunc and forward differ: "
                             f"{by_ufunc!r} != {by_forward!r}")


def _run(case, arrays, ctx):
    """Leaves and outputs of ``case`` built and forwarded (static graph) in ``ctx``."""
    spec = SPECS[case.name]
    if "seed" in spec.arg_names:
        # seed=-1 draws from the global generator: the same draws on both backends
        nn.seed(case.seed, set_parameter_seed=False)
    with nn.context_scope(ctx):
        xs = [[_variable(a) for a in x] if isinstance(x, list) else _variable(x) for x in arrays]
        result = getattr(FB, spec.snake)(*(xs[0] if spec.variadic_input else xs), **case.args)
        ys = list(result) if isinstance(result, tuple) else [result]
        nn.forward_all(ys)
    return _flat(xs), ys


def _variable(a):
    if a is None:
        return None
    v = nn.Variable(a.shape, need_grad=a.dtype.kind == "f")
    v.d = a
    return v


def _flat(items):
    return [a for x in items for a in (x if isinstance(x, list) else [x])]


def _reference(case, arrays):
    ref = case.ref(*arrays, **case.args)
    return list(ref) if isinstance(ref, tuple) else [ref]


def _backward(leaves, ys, dys, ctx, zero=True):
    """The leaves' gradients after one backward from every output (from zero, or added to
    what they hold)."""
    with nn.context_scope(ctx):
        for v in leaves:
            if zero and v is not None and v.need_grad:
                v.grad.zero()
        for y, dy in zip(ys, dys):     # each output's backward adds its share
            y.backward(dy)
    return [None if v is None or not v.need_grad else v.g.copy() for v in leaves]


def _grad_positions(case, leaves):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, v in enumerate(leaves) if v is not None and v.need_grad]


def _close(got, expected, atol, rtol, what, half=None):
    """``assert_allclose``; under half (``half = (half_rtol, half_floor_ratio)``) element by
    element: ``|got - expected| <= half_rtol (|expected| + half_floor_ratio max|expected|)``.
    """
    if half is not None:
        _close_half(got, expected, *half, what)
        return
    np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol, err_msg=what)


def _close_half(got, expected, half_rtol, half_floor_ratio, what):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {expected.shape}")
    finite = np.abs(expected[np.isfinite(expected)])
    floor = half_floor_ratio * float(finite.max(initial=0.0))
    with np.errstate(invalid="ignore"):            # inf - inf: equal infinities pass below
        error = np.abs(got - expected)
        bound = half_rtol * (np.abs(expected) + floor)
        both_nan = np.isnan(got) & np.isnan(expected)
        bad = ~((error <= bound) | both_nan | (got == expected))
        excess = np.where(bad, np.nan_to_num(error - bound, nan=np.inf), -np.inf)
    if bad.any():
        worst = tuple(int(i) for i in np.unravel_index(np.argmax(excess), bad.shape))
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} elements differ beyond the half "
            f"tolerance; at {worst}: got {got[worst]}, expected {expected[worst]}, error "
            f"{error[worst]:.3g} > {bound[worst]:.3g} (half_rtol={half_rtol}, "
            f"floor={floor:.3g})")


# -- solvers --------------------------------------------------------------------------------
def _check_solver(type_name, contexts):
    """A few steps of solver ``type_name`` on the backend and on the CPU: equal parameters,
    states and inf/nan answers."""
    make = getattr(S, type_name, None)
    if make is None:
        raise ValueError(f"the backend registers a rule for solver {type_name!r}, which "
                         "nnabla.solvers does not define")
    ours, cpu = (_train(make, ctx) for ctx in contexts)
    for key, expected in cpu.items():
        np.testing.assert_allclose(ours[key], expected, rtol=1e-4, atol=1e-5, err_msg=key)


def _train(make, ctx):
    """Parameters, states and inf/nan answers after :data:`SOLVER_STEPS` steps."""
    rng = np.random.RandomState(7)
    with nn.context_scope(ctx):
        params = {k: nn.Variable.from_numpy_array(rng.randn(*shape).astype(np.float32),
                                                  need_grad=True)
                  for k, shape in (("w", (3, 4)), ("b", (4,)))}
        solver = make()
        solver.set_parameters(params)
        for _ in range(SOLVER_STEPS):
            for v in params.values():
                v.g = rng.randn(*v.shape) * 2
            solver.weight_decay(0.05)
            solver.clip_grad_by_norm(1.5)
            solver.scale_grad(0.5)
            solver.update()
        out = {f"parameter {k}": v.d.copy() for k, v in params.items()}
        for key, state in solver.get_states().items():
            out.update({f"state {key}/{n}": v.d.copy() for n, v in state.pstate.items()})
            out[f"step count {key}"] = np.array(state.t)
        params["w"].g = np.array([[np.nan, 0, 0, 0]] + [[0] * 4] * 2)
        params["b"].g = np.array([np.inf, 0, 0, 0])
        out["check_*_grad"] = np.array([solver.check_inf_grad(), solver.check_nan_grad(),
                                        solver.check_inf_or_nan_grad()])
    return out


# -- graph semantics ------------------------------------------------------------------------
def _graph_result(name, needs, check, kernels, contexts):
    """Run ``check`` on the backend and on the CPU; their arrays must agree."""
    missing = [n for n in needs if n not in kernels]
    if missing:
        return Result("graph", name, NOT_IMPLEMENTED, f"no kernel for {', '.join(missing)}")
    half = ((GRAPH_HALF_RTOL, HALF_FLOOR_RATIO) if contexts[0].backend[0].endswith(":half")
            else None)
    try:
        ours, cpu = (check(ctx) for ctx in contexts)
        for key, expected in cpu.items():
            _close(ours[key], expected, 1e-4, 1e-3, key, half)
    except NotImplementedError as e:    # strict mode: the check needs another kernel
        return Result("graph", name, NOT_IMPLEMENTED, _describe(e))
    except Exception as e:  # noqa: BLE001 - a broken backend is reported, not raised
        return Result("graph", name, FAILED, _describe(e))
    return Result("graph", name, PASSED)


# -- command line ---------------------------------------------------------------------------
def main(argv=None):
    """``python -m nnabla.testing.backend_kit NAME``: print the report; 1 on a failure."""
    parser = argparse.ArgumentParser(prog="python -m nnabla.testing.backend_kit",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("backend", help="the backend's name, as in a context ('cuda')")
    parser.add_argument("--type-config", default="float", choices=("float", "half"))
    parser.add_argument("--functions", nargs="+", metavar="NAME",
                        help="function type names to check (default: all)")
    parser.add_argument("--no-solvers", action="store_true", help="skip the solver rules")
    parser.add_argument("--no-graph", action="store_true", help="skip the graph semantics")
    args = parser.parse_args(argv)
    report = check_backend(args.backend, functions=args.functions,
                           type_config=args.type_config, solvers=not args.no_solvers,
                           graph=not args.no_graph)
    print(report.table())
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
