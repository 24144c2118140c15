""""NNabla by Examples" (nnabla-python-docs.txt, from line 81), run on the CPU without plots.

The network builders below are copied from the tutorial; the training loops are the tutorial's,
called with fewer steps.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S


def logreg_forward(x):
    with nn.parameter_scope("affine1"):
        y = PF.affine(x, 10)
    return y


def logreg_loss(y, t):
    loss = F.mean(F.softmax_cross_entropy(y, t))  # Softmax Xentropy fits multiclass classification problems  # noqa: E501
    return loss


def mlp(x, hidden=[16, 32, 16]):
    hs = []
    with nn.parameter_scope("mlp"):  # Parameter scope can be nested
        h = x
        for hid, hsize in enumerate(hidden):
            with nn.parameter_scope("affine{}".format(hid + 1)):
                h = F.tanh(PF.affine(h, hsize))
                hs.append(h)
        with nn.parameter_scope("classifier"):
            y = PF.affine(h, 10)
    return y, hs


def cnn(x):
    with nn.parameter_scope("cnn"):  # Parameter scope can be nested
        with nn.parameter_scope("conv1"):
            c1 = F.tanh(PF.batch_normalization(
                PF.convolution(x, 4, (3, 3), pad=(1, 1), stride=(2, 2))))
        with nn.parameter_scope("conv2"):
            c2 = F.tanh(PF.batch_normalization(
                PF.convolution(c1, 8, (3, 3), pad=(1, 1))))
            c2 = F.average_pooling(c2, (2, 2))
        with nn.parameter_scope("fc3"):
            fc3 = F.tanh(PF.affine(c2, 32))
        with nn.parameter_scope("classifier"):
            y = PF.affine(fc3, 10)
    return y, [c1, c2, fc3]


def softmax_cross_entropy_grads(x, w, b, label):
    """d mean(softmax_cross_entropy(x @ w + b, label)) / d (w, b), in numpy."""
    x = x.reshape(len(x), -1).astype(np.float64)
    z = x @ w + b
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(x)), label.ravel()] -= 1
    return x.T @ p / len(x), p.mean(axis=0)


def build_logreg(data):
    img, label = data.next()
    x = nn.Variable(img.shape)  # Define an image variable
    with nn.parameter_scope("affine1"):
        y = PF.affine(x, 10)  # Output is 10 class
    t = nn.Variable(label.shape)  # Define an target variable
    loss = F.mean(F.softmax_cross_entropy(y, t))
    x.d = img
    t.d = label
    return x, y, t, loss


def test_tiny_digits_has_the_tutorial_dataset_and_batch_shapes(digits, data, capsys):
    import tiny_digits
    tiny_digits.plot_stats(digits)
    img, label = data.next()
    assert capsys.readouterr().out.splitlines() == [
        "Num images: 1797", "Image shape: (8, 8)", "Labels: [0 1 2 3 4 5 6 7 8 9]"]
    assert img.shape == (64, 1, 8, 8) and label.shape == (64, 1)


def test_static_graph_build_infers_the_printed_shapes_without_computing(data, capsys):
    x, y, t, loss = build_logreg(data)
    print("Printing shapes of variables")
    print(x.shape)
    print(y.shape)
    print(t.shape)
    print(loss.shape)  # empty tuple means scalar
    assert capsys.readouterr().out == (
        "Printing shapes of variables\n(64, 1, 8, 8)\n(64, 10)\n(64, 1)\n()\n")
    assert not np.any(y.d)


def test_forward_gives_affine_scores_and_their_mean_softmax_cross_entropy(data):
    x, y, t, loss = build_logreg(data)
    loss.forward()
    w, b = (p.d for p in nn.get_parameters().values())
    np.testing.assert_allclose(y.d, x.d.reshape(64, -1) @ w + b, rtol=1e-5, atol=1e-4)
    z = y.d.astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    assert loss.d == pytest.approx(-log_p[np.arange(64), t.d.ravel().astype(int)].mean(), rel=1e-5)


def test_get_parameters_lists_the_affine1_weight_and_bias(data):
    build_logreg(data)
    params = nn.get_parameters()
    assert [(k, v.shape, v.need_grad) for k, v in params.items()] == [
        ("affine1/affine/W", (64, 10), True), ("affine1/affine/b", (10,), True)]


def test_backward_gives_the_closed_form_weight_gradient(data):
    x, y, t, loss = build_logreg(data)
    loss.forward()
    for param in nn.get_parameters().values():
        param.grad.zero()
    loss.backward()
    w, b = nn.get_parameters().values()
    grad_w, _ = softmax_cross_entropy_grads(x.d, w.d, b.d, t.d)
    np.testing.assert_allclose(w.g, grad_w, rtol=1e-4, atol=1e-6)
    assert not np.any(w.g.flat[:10])  # the top-left pixel of every digit is blank


def test_backward_gives_the_closed_form_bias_gradient(data):
    x, y, t, loss = build_logreg(data)
    loss.forward()
    for param in nn.get_parameters().values():
        param.grad.zero()
    loss.backward()
    w, b = nn.get_parameters().values()
    _, grad_b = softmax_cross_entropy_grads(x.d, w.d, b.d, t.d)
    np.testing.assert_allclose(b.g, grad_b, rtol=1e-4, atol=1e-6)


def test_one_sgd_step_decays_the_weight_then_descends_its_gradient(data):
    x, y, t, loss = build_logreg(data)
    learning_rate = 1e-3
    solver = S.Sgd(learning_rate)
    solver.set_parameters(nn.get_parameters())  # Set parameter variables to be updated.
    w, b = nn.get_parameters().values()
    w0, b0 = w.d.copy(), b.d.copy()
    x.d, t.d = data.next()
    loss.forward()
    solver.zero_grad()  # Initialize gradients of all parameters to zero.
    loss.backward()
    solver.weight_decay(1e-5)  # Applying weight decay as an regularization
    solver.update()
    grad_w, _ = softmax_cross_entropy_grads(x.d, w0, b0, t.d)
    np.testing.assert_allclose(w.d, w0 - learning_rate * (grad_w + 1e-5 * w0), rtol=1e-5, atol=1e-7)


def printed_losses(out):
    """The losses the tutorial's training loops print as ``step loss`` lines."""
    return [float(line.split()[1]) for line in out.splitlines()]


def test_sgd_training_loop_lowers_the_loss_and_predicts_most_digits(data, capsys):
    x, y, t, loss = build_logreg(data)
    solver = S.Sgd(1e-3)
    solver.set_parameters(nn.get_parameters())  # Set parameter variables to be updated.
    for i in range(1000):
        x.d, t.d = data.next()
        loss.forward()
        solver.zero_grad()  # Initialize gradients of all parameters to zero.
        loss.backward()
        solver.weight_decay(1e-5)  # Applying weight decay as an regularization
        solver.update()
        if i % 100 == 0:  # Print for each 10 iterations
            print(i, loss.d)
    losses = printed_losses(capsys.readouterr().out)
    assert len(losses) == 10 and max(losses[-3:]) < losses[0] / 5
    x.d, t.d = data.next()  # Here we predict images from training set although it's useless.
    y.forward()  # You can execute a sub graph.
    assert (y.d.argmax(axis=1) == t.d.ravel()).mean() > 0.7


def test_auto_forward_computes_while_the_graph_is_built(data):
    img, label = data.next()
    x = nn.Variable(img.shape)
    t = nn.Variable(label.shape)
    x.d, t.d = data.next()
    with nn.auto_forward():  # Graph are executed
        y = logreg_forward(x)
        loss = logreg_loss(y, t)
    scores = y.d.copy()
    static_loss = logreg_loss(logreg_forward(x), t)  # the same parameters, in a static graph
    static_loss.forward()
    assert loss.d == pytest.approx(float(static_loss.d), rel=1e-6)
    np.testing.assert_allclose(static_loss.parent.inputs[0].parent.inputs[0].d, scores, rtol=1e-6)
    nn.get_parameters()["affine1/affine/W"].grad.zero()
    loss.backward()
    assert np.any(nn.get_parameters()["affine1/affine/W"].g)


def test_mlp_builder_infers_the_printed_shapes(data, capsys):
    img, label = data.next()
    x = nn.Variable(img.shape)
    y, hs = mlp(x)
    print("Printing shapes")
    print("x: {}".format(x.shape))
    for i, h in enumerate(hs):
        print("h{}:".format(i + 1), h.shape)
    print("y: {}".format(y.shape))
    assert capsys.readouterr().out == ("Printing shapes\nx: (64, 1, 8, 8)\nh1: (64, 16)\n"
                                       "h2: (64, 32)\nh3: (64, 16)\ny: (64, 10)\n")
    assert list(nn.get_parameters()) == [
        f"mlp/{scope}/affine/{p}" for scope in ("affine1", "affine2", "affine3", "classifier")
        for p in "Wb"]


def make_training(x, t, loss, data):
    # Copied from the above logreg example.
    def training(steps, learning_rate):
        solver = S.Sgd(learning_rate)
        solver.set_parameters(nn.get_parameters())  # Set parameter variables to be updated.
        for i in range(steps):
            x.d, t.d = data.next()
            loss.forward()
            solver.zero_grad()  # Initialize gradients of all parameters to zero.
            loss.backward()
            solver.weight_decay(1e-5)  # Applying weight decay as an regularization
            solver.update()
            if i % 100 == 0:  # Print for each 10 iterations
                print(i, loss.d)
    return training


def test_mlp_training_lowers_the_loss(data, capsys):
    img, label = data.next()
    x, t = nn.Variable(img.shape), nn.Variable(label.shape)
    y, hs = mlp(x)
    loss = logreg_loss(y, t)  # Reuse logreg loss function.
    training = make_training(x, t, loss, data)
    training(1000, 1e-2)
    losses = printed_losses(capsys.readouterr().out)
    assert losses[0] > 2.0 and max(losses[-3:]) < 1.5


def test_cnn_trains_on_the_cpu_extension_context_and_saves_its_parameters(data, capsys):
    from nnabla.ext_utils import get_extension_context
    img, label = data.next()
    x, t = nn.Variable(img.shape), nn.Variable(label.shape)
    ctx = get_extension_context('cpu', device_id=0)  # the tutorial's 'cudnn', on the CPU
    print("Context: {}".format(ctx))
    nn.set_default_context(ctx)  # Set CUDA as a default context.
    y, hs = cnn(x)
    loss = logreg_loss(y, t)
    make_training(x, t, loss, data)(200, 1e-1)
    out = capsys.readouterr().out
    assert out.startswith("Context: Context(backend=['cpu:float'], array_class='CpuCachedArray'")
    losses = printed_losses(out.split("\n", 1)[1])
    assert losses[0] > 2.0 and losses[1] < 1.5
    assert [h.shape for h in hs] == [(64, 4, 4, 4), (64, 8, 2, 2), (64, 32)]
    path_cnn_params = "tmp.params.cnn.h5"
    nn.save_parameters(path_cnn_params)
    saved = {k: v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
    nn.clear_parameters()
    nn.load_parameters(path_cnn_params)
    assert all(np.array_equal(v.d, saved[k]) for k, v in nn.get_parameters(grad_only=False).items())
    assert len(nn.get_parameters(grad_only=False)) == len(saved) == 16


def rnn(xs, h0, hidden=32):
    hs = []
    with nn.parameter_scope("rnn"):
        h = h0
        # Time step loop
        for x in xs:
            # Note: Parameter scopes are reused over time
            # which means parameters are shared over time.
            with nn.parameter_scope("x2h"):
                x2h = PF.affine(x, hidden, with_bias=False)
            with nn.parameter_scope("h2h"):
                h2h = PF.affine(h, hidden)
            h = F.tanh(x2h + h2h)
            hs.append(h)
        with nn.parameter_scope("classifier"):
            y = PF.affine(h, 10)
    return y, hs


def split_grid4(x):
    x0 = x[..., :4, :4]
    x1 = x[..., :4, 4:]
    x2 = x[..., 4:, :4]
    x3 = x[..., 4:, 4:]
    return x0, x1, x2, x3


def test_elman_rnn_shares_parameters_over_time_and_learns(data, capsys):
    img, label = data.next()
    t = nn.Variable(label.shape)
    hidden = 32
    seq_img = split_grid4(img)
    seq_x = [nn.Variable(subimg.shape) for subimg in seq_img]
    h0 = nn.Variable((img.shape[0], hidden))  # Initial hidden state.
    y, hs = rnn(seq_x, h0, hidden)
    loss = logreg_loss(y, t)
    assert [(k, v.shape) for k, v in nn.get_parameters().items()] == [
        ("rnn/x2h/affine/W", (16, 32)), ("rnn/h2h/affine/W", (32, 32)),
        ("rnn/h2h/affine/b", (32,)), ("rnn/classifier/affine/W", (32, 10)),
        ("rnn/classifier/affine/b", (10,))]

    def training_rnn(steps, learning_rate):
        solver = S.Sgd(learning_rate)
        solver.set_parameters(nn.get_parameters())  # Set parameter variables to be updated.
        for i in range(steps):
            minibatch = data.next()
            img, t.d = minibatch
            seq_img = split_grid4(img)
            h0.d = 0  # Initialize as 0
            for x, subimg in zip(seq_x, seq_img):
                x.d = subimg
            loss.forward()
            solver.zero_grad()  # Initialize gradients of all parameters to zero.
            loss.backward()
            solver.weight_decay(1e-5)  # Applying weight decay as an regularization
            solver.update()
            if i % 100 == 0:  # Print for each 10 iterations
                print(i, loss.d)
    training_rnn(300, 1e-1)
    losses = printed_losses(capsys.readouterr().out)
    assert losses[0] > 2.0 and max(losses[1:]) < 1.5


def cnn_embed(x, test=False):
    # Note: Identical configuration with the CNN example above.
    # Parameters pretrained in the above CNN example are used.
    with nn.parameter_scope("cnn"):
        with nn.parameter_scope("conv1"):
            c1 = F.tanh(PF.batch_normalization(PF.convolution(x, 4, (3, 3), pad=(1, 1), stride=(2, 2)), batch_stat=not test))  # noqa: E501
        with nn.parameter_scope("conv2"):
            c2 = F.tanh(PF.batch_normalization(PF.convolution(c1, 8, (3, 3), pad=(1, 1)), batch_stat=not test))  # noqa: E501
            c2 = F.average_pooling(c2, (2, 2))
        with nn.parameter_scope("fc3"):
            fc3 = PF.affine(c2, 32)
    # Additional affine for map into 2D.
    with nn.parameter_scope("embed2d"):
        embed = PF.affine(c2, 2)
    return embed, [c1, c2, fc3]


def siamese_loss(e0, e1, t, margin=1.0, eps=1e-4):
    dist = F.sum(F.squared_error(e0, e1), axis=1)  # Squared distance
    # Contrastive loss
    sim_cost = t * dist
    dissim_cost = (1 - t) * \
        (F.maximum_scalar(margin - (dist + eps) ** (0.5), 0) ** 2)
    return F.mean(sim_cost + dissim_cost)


def test_siamese_network_reuses_saved_cnn_parameters_and_trains_only_the_embedding(digits, data):
    cnn(nn.Variable((64, 1, 8, 8)))
    nn.save_parameters("tmp.params.cnn.h5")
    nn.clear_parameters()
    _ = nn.load_parameters("tmp.params.cnn.h5")
    x0, x1 = nn.Variable((64, 1, 8, 8)), nn.Variable((64, 1, 8, 8))
    t = nn.Variable((64,))  # Same class or not
    e0, hs0 = cnn_embed(x0)
    e1, hs1 = cnn_embed(x1)  # NOTE: parameters are shared
    loss = siamese_loss(e0, e1, t)
    solver = S.Sgd(1e-2)
    with nn.parameter_scope("embed2d"):
        # Only 2d embedding affine will be updated.
        solver.set_parameters(nn.get_parameters())
    before = {k: v.d.copy() for k, v in nn.get_parameters().items()}
    for i in range(20):
        (x0.d, label0), (x1.d, label1) = [[a.copy() for a in data.next()] for _ in range(2)]
        t.d = (label0 == label1).astype(int).flat  # the tutorial's np.int is gone from numpy
        loss.forward()
        solver.zero_grad()  # Initialize gradients of all parameters to zero.
        loss.backward()
        solver.weight_decay(1e-5)  # Applying weight decay as an regularization
        solver.update()
    changed = sorted(k for k, v in nn.get_parameters().items()
                     if not np.array_equal(v.d, before[k]))
    # The embedding bias cancels in e0 - e1, so only the weight moves.
    assert changed == ["embed2d/affine/W"] and np.isfinite(loss.d)
    x_all = nn.Variable(digits.images[:512, None].shape)
    x_all.d = digits.images[:512, None]
    with nn.auto_forward():
        embed, _ = cnn_embed(x_all, test=True)
    assert embed.shape == (512, 2) and np.all(np.isfinite(embed.d))


def test_tutorial_import_cell_finds_tile_images_in_nnabla_monitor(data):
    from nnabla.monitor import tile_images
    img, label = data.next()
    assert tile_images(img).shape == (72, 72)  # 8 x 8 tiles of 8 x 8 with a 1-pixel border
