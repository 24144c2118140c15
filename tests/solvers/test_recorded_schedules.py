"""Every solver over a changing learning rate, weight decay and clipping, against nnabla 1.39.

The trajectories were recorded from nnabla 1.39.0 by ``tools/record_nnabla_reference.py``
(``tests/data/nnabla_1.39_recorded_values.json``): per step, the learning rate is set (a
multiple of the initial one), ``weight_decay()`` and ``clip_grad_by_norm()`` are called on some
steps, then ``update()``; the parameters are compared after every step, the solver states
(names, step count, values) after the last. Decoupled decays (SgdW, AdamW, AdaBelief) scale with
``lr / init_lr``, which only a changing learning rate shows.
"""
import json
import pathlib

import nnabla as nn
import nnabla.solvers as S
import numpy as np
import pytest

RECORDED = json.loads((pathlib.Path(__file__).resolve().parents[1] / "data"
                       / "nnabla_1.39_recorded_values.json").read_text())


def _row_id(row):
    return row["solver"] + "".join(f"-{k}={v}" for k, v in row["kwargs"].items())


@pytest.mark.parametrize("row", RECORDED["solvers"], ids=_row_id)
def test_solver_follows_nnabla_over_a_learning_rate_schedule(row):
    params = {k: nn.Variable.from_numpy_array(np.asarray(v, np.float32), need_grad=True)
              for k, v in row["init"].items()}
    solver = getattr(S, row["solver"])(**row["kwargs"])
    solver.set_parameters(params)
    for t, step in enumerate(row["steps"], 1):
        for k, g in step["grads"].items():
            params[k].g = np.asarray(g, np.float32)
        solver.set_learning_rate(step["lr"])
        if step["weight_decay"] is not None:
            solver.weight_decay(step["weight_decay"])
        if step["clip_grad_by_norm"] is not None:
            solver.clip_grad_by_norm(step["clip_grad_by_norm"])
        solver.update()
        for k, v in params.items():
            np.testing.assert_allclose(v.d, step["params"][k], rtol=1e-5, atol=1e-7,
                                       err_msg=f"{_row_id(row)}: step {t}, parameter {k!r}")
    states = solver.get_states()
    assert sorted(states) == sorted(row["states"])
    for k, expected in row["states"].items():
        assert states[k].t == expected["t"]
        assert sorted(states[k].pstate) == sorted(expected["pstate"]), k
        for name, value in expected["pstate"].items():
            np.testing.assert_allclose(states[k].pstate[name].d, value, rtol=1e-5, atol=1e-7,
                                       err_msg=f"{_row_id(row)}: state {name!r} of {k!r}")


def test_the_schedule_changes_the_learning_rate_and_decays_and_clips():
    factors, decays, clips = zip(*RECORDED["solver_schedule"])
    assert len(set(factors)) > 2
    assert any(d is not None for d in decays) and any(c is not None for c in clips)
    assert RECORDED["recorded_with"].startswith("nnabla 1.39.0")
