"""A small NNP training project on scikit-learn's 8x8 digits, written with nnabla.utils.save:
CSV datasets (``train.csv``, ``valid.csv``: columns ``x__0..x__63`` scaled to [0, 1] and
``y``), and ``model.nnp`` with networks ``training`` (softmax cross entropy), ``validation``
(top-1 error), ``runtime`` (softmax probabilities ``prob``), an Adam optimizer, monitors
``train_error``/``valid_error``, executor ``runtime`` and a training config."""
import csv
import os

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from nnabla.utils.save import save

BATCH = 32


def write_csv(path, x, y):
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow([f"x__{i}" for i in range(x.shape[1])] + ["y"])
        for features, label in zip(x, y):
            writer.writerow([f"{v:g}" for v in features] + [int(label)])


def digits(n_train=640, n_valid=160):
    from sklearn.datasets import load_digits

    data = load_digits()
    x, y = data.data / 16.0, data.target
    return (x[:n_train], y[:n_train]), (x[n_train:n_train + n_valid],
                                         y[n_train:n_train + n_valid])


def networks():
    x, y = nn.Variable((BATCH, 64)), nn.Variable((BATCH, 1))
    loss = F.softmax_cross_entropy(PF.affine(x, 10, name="fc"), y)
    vx, vy = nn.Variable((BATCH, 64)), nn.Variable((BATCH, 1))
    error = F.top_n_error(PF.affine(vx, 10, name="fc"), vy)
    rx = nn.Variable((BATCH, 64))
    prob = F.softmax(PF.affine(rx, 10, name="fc"))
    return [{"name": "training", "batch_size": BATCH, "outputs": {"loss": loss},
             "names": {"x": x, "y": y}},
            {"name": "validation", "batch_size": BATCH, "outputs": {"error": error},
             "names": {"x": vx, "y": vy}},
            {"name": "runtime", "batch_size": BATCH, "outputs": {"prob": prob},
             "names": {"x": rx}}]


def make_project(folder, max_epoch=3, seed=0, relative_uris=False):
    """Write the CSV datasets and ``model.nnp`` into ``folder``; returns the nnp path.

    With ``relative_uris`` the datasets are named ``train.csv`` and ``valid.csv``: nnabla (and
    we) open a dataset's uri as given, so relative to the working directory of the command,
    not to the .nnp's folder; run the commands in ``folder``.
    """
    def uri(name):
        return name if relative_uris else os.path.join(folder, name)

    (tx, ty), (vx, vy) = digits()
    write_csv(os.path.join(folder, "train.csv"), tx, ty)
    write_csv(os.path.join(folder, "valid.csv"), vx, vy)
    nn.clear_parameters()
    rng = np.random.RandomState(seed)
    with nn.parameter_scope(""):
        nets = networks()
    nn.get_parameters()["fc/affine/W"].d = rng.randn(64, 10) * 0.01
    solver = S.Adam(alpha=0.01)
    solver.set_parameters(nn.get_parameters())
    data = {"x": "x", "y": "y"}
    contents = {
        "global_config": {"default_context": nn.get_current_context()},
        "training_config": {"max_epoch": max_epoch, "iter_per_epoch": len(tx) // BATCH,
                            "save_best": True},
        "networks": nets,
        "datasets": [{"name": "train", "uri": uri("train.csv"),
                      "batch_size": BATCH, "shuffle": True, "variables": ["x", "y"]},
                     {"name": "valid", "uri": uri("valid.csv"),
                      "batch_size": BATCH, "shuffle": False, "variables": ["x", "y"]}],
        "optimizers": [{"name": "optimizer", "solver": solver, "network": "training",
                        "dataset": "train", "data_variables": data, "loss_variables": ["loss"]}],
        "monitors": [{"name": "train_error", "network": "validation", "dataset": "train",
                      "data_variables": data, "monitor_variables": ["error"]},
                     {"name": "valid_error", "network": "validation", "dataset": "valid",
                      "data_variables": data, "monitor_variables": ["error"]}],
        "executors": [{"name": "runtime", "network": "runtime", "data": ["x"],
                       "output": ["prob"]}],
    }
    path = os.path.join(folder, "model.nnp")
    save(path, contents)
    nn.clear_parameters()
    return path
