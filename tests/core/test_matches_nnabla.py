"""Training numbers against values recorded from nnabla 1.39.0 itself.

``REFERENCE`` holds the losses of five training steps of the network below, run
with nnabla 1.39.0 (cp310 wheel, this machine's kind) from the same script: the
same ``nn.seed`` initialisation, data and solver settings. Matching them checks
initialisation order, forward, backward and every solver rule end to end.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S

REFERENCE = {
    "Sgd": [2.3282437324523926, 1.6716535091400146,
            1.3777480125427246, 1.654491901397705, 1.5238990783691406],
    "Momentum": [2.3282437324523926, 1.7018448114395142,
                 1.3769935369491577, 1.7107675075531006, 1.462000846862793],
    "Adam": [2.3282437324523926, 1.766898512840271,
             1.620837688446045, 1.7377995252609253, 1.8542637825012207],
    "AdamW": [2.3282437324523926, 1.7668495178222656,
              1.6207513809204102, 1.7376625537872314, 1.8539607524871826],
    "RMSprop": [2.3282437324523926, 1.724797010421753,
                1.5438430309295654, 1.685041904449463, 1.7490754127502441],
    "Adagrad": [2.3282437324523926, 1.6287205219268799,
                1.4086451530456543, 1.6406562328338623, 1.5593922138214111],
    "Lion": [2.3282437324523926, 1.7856225967407227,
             1.664668321609497, 1.802555799484253, 1.9701461791992188],
}
SETTINGS = {"Sgd": dict(lr=0.1), "Momentum": dict(lr=0.05), "Adam": {}, "AdamW": dict(wd=1e-3),
            "RMSprop": {}, "Adagrad": {}, "Lion": {}}


def _train(solver):
    nn.clear_parameters()
    nn.seed(3)
    rng = np.random.RandomState(0)
    x, t = nn.Variable((8, 1, 6, 6)), nn.Variable((8, 1))
    h = F.relu(PF.batch_normalization(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1"),
                                      name="bn1"))
    h = F.tanh(PF.affine(F.max_pooling(h, (2, 2)), 16, name="fc1"))
    loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 5, name="fc2"), t))
    solver.set_parameters(nn.get_parameters())
    losses = []
    for _ in range(5):
        x.d, t.d = rng.randn(8, 1, 6, 6), rng.randint(0, 5, (8, 1))
        loss.forward()
        solver.zero_grad()
        loss.backward()
        solver.weight_decay(1e-4)
        solver.update()
        losses.append(float(loss.d))
    nn.clear_parameters()
    return losses


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_training_losses_match_nnabla_1_39(name):
    losses = _train(getattr(S, name)(**SETTINGS[name]))
    np.testing.assert_allclose(losses, REFERENCE[name], rtol=2e-6)
