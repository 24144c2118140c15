"""Facts about graph functions that the inspection tools print."""
from __future__ import annotations


def function_rank(function, _memo=None):
    """The rank (depth) of ``function`` in its graph, as nnabla counts it.

    A variable without parent has rank 0, a function's rank is the largest rank of its
    inputs, and its outputs have the function's rank plus one.
    """
    rank = getattr(function, "rank", None)
    if rank is not None:
        return rank
    memo = {} if _memo is None else _memo
    stack = [function]
    while stack:
        current = stack[-1]
        if current in memo:
            stack.pop()
            continue
        parents = [v.parent for v in current.inputs if v.parent is not None]
        pending = [p for p in parents if p not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[current] = max((memo[p] + 1 for p in parents), default=0)
        stack.pop()
    return memo[function]


def parameter_scope_of(variable, parameters):
    """The parameter scope (``'conv1'``) of ``variable`` when it is one of ``parameters``
    (a name -> Variable dict), else None."""
    for name, parameter in parameters.items():
        if parameter is variable or parameter.data is variable.data \
                or parameter.data == variable.data:
            return "/".join(name.split("/")[:-1])
    return None
