"""nnabla's naming rule for functions and variables written into networks."""
from __future__ import annotations


def unique_name(counter, prefix):
    """``prefix`` the first time, then ``prefix_1``, ``prefix_2`` ... (nnabla's rule);
    ``counter`` (a dict) keeps the counts."""
    if prefix in counter:
        name = f"{prefix}_{counter[prefix]}"
        counter[prefix] += 1
        return name
    counter[prefix] = 1
    return prefix
