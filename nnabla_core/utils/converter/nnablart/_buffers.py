"""Sharing of activation buffers in an NNB network, as nnabla's NNB exporter plans it.

Each Buffer variable lives from the first function that uses it (an input variable: from
function 0) to the last one (an output variable: to the end). At each function the live
variables need buffers; the number of actual buffers is the largest such count, and actual
buffer ``i`` is as large as the ``i``-th smallest variable live at any one function. Then,
function by function, a variable without a buffer gets the first free actual buffer large
enough, else the first free one, grown to its size. The NNB file stores the actual buffer
sizes, and each Buffer variable refers to its actual buffer.
"""
from __future__ import annotations


def _lifespans(info):
    """(first function, last function) of each Buffer variable, by buffer index."""
    names = {v.name: i for i, v in enumerate(info.network.variable)}
    types = {v.name: v.type for v in info.network.variable}
    spans = [[-1, -1] for _ in info.buffer_index]
    last = len(info.network.function)
    for f_index, f in enumerate(info.network.function):
        for name in list(f.input) + list(f.output):
            if types[name] != "Buffer":
                continue
            span = spans[info.buffer_ids[names[name]]]
            if span[0] < 0:
                span[0] = 0 if name in info.input_variables else f_index
            span[1] = last if name in info.output_variables else f_index
    return spans


def _live(spans, f_index):
    return [b for b, (begin, end) in enumerate(spans) if begin <= f_index <= end]


def plan_buffers(info):
    """The actual buffer sizes and the actual buffer of each Buffer variable.

    Args:
        info: the exporter's network information (``network``, ``buffer_index``: buffer
            index -> [variable index], ``buffer_ids``, ``buffer_sizes``, ``input_variables``,
            ``output_variables``).

    Returns:
        (list of int, dict): sizes; variable index -> actual buffer index.
    """
    spans = _lifespans(info)
    n_functions = len(info.network.function)
    live = [_live(spans, i) for i in range(n_functions)]
    count = max((len(x) for x in live), default=0)
    sizes = [0] * count
    for buffers in live:
        needed = sorted(info.buffer_sizes[b] for b in buffers) + [-1] * (count - len(buffers))
        needed = sorted(needed)
        sizes = [max(s, n) for s, n in zip(sizes, needed)]
    assigned = {}
    for buffers in live:
        taken = [False] * count
        for b in buffers:
            v = info.buffer_index[b][0]
            if v in assigned:
                taken[assigned[v]] = True
        for b in buffers:
            v = info.buffer_index[b][0]
            if v in assigned:
                continue
            need = info.buffer_sizes[b]
            slot = next((a for a in range(count) if not taken[a] and need <= sizes[a]), None)
            if slot is None:
                slot = next((a for a in range(count) if not taken[a]), None)
                if slot is None:
                    continue
                sizes[slot] = need
            taken[slot] = True
            assigned[v] = slot
    return sizes, assigned
