"""The networks the benchmarks train, written with nnabla's public PF API only.

Shared by the bench scripts, so the same definitions run on nnabla 1.39 and on ours.
Keep this module compatible with Python 3.10 (the reference interpreter).
"""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF


def mlp(x, hidden=(16, 32, 16)):
    """The tutorial MLP: tanh affine layers, then a 10-way classifier."""
    with nn.parameter_scope("mlp"):
        h = x
        for index, size in enumerate(hidden):
            with nn.parameter_scope(f"affine{index + 1}"):
                h = F.tanh(PF.affine(h, size))
        with nn.parameter_scope("classifier"):
            return PF.affine(h, 10)


def deep_cnn(x):
    """The static-vs-dynamic tutorial's CNN: 12 conv+BN+tanh blocks, pooling, two affines."""
    with nn.parameter_scope("cnn"):
        with nn.parameter_scope("conv1"):
            h = F.tanh(PF.batch_normalization(PF.convolution(x, 64, (3, 3), pad=(1, 1))))
        for i in range(10):
            with nn.parameter_scope(f"conv{i + 2}"):
                h = F.tanh(PF.batch_normalization(PF.convolution(h, 128, (3, 3), pad=(1, 1))))
        with nn.parameter_scope("conv_last"):
            h = F.tanh(PF.batch_normalization(PF.convolution(h, 512, (3, 3), pad=(1, 1))))
            h = F.average_pooling(h, (2, 2))
        with nn.parameter_scope("fc"):
            h = F.tanh(PF.affine(h, 1024))
        with nn.parameter_scope("classifier"):
            return PF.affine(h, 10)


def _conv_bn(h, maps, kernel, stride, test):
    """Convolution without bias (the BN that follows has one), then batch normalization."""
    pad = (kernel // 2, kernel // 2)
    h = PF.convolution(h, maps, (kernel, kernel), pad=pad, stride=(stride, stride),
                       with_bias=False)
    return PF.batch_normalization(h, batch_stat=not test)


def _basic_block(x, maps, stride, test):
    """Two 3x3 conv+BN layers and a shortcut (1x1 conv+BN when the shape changes)."""
    with nn.parameter_scope("conv1"):
        h = F.relu(_conv_bn(x, maps, 3, stride, test))
    with nn.parameter_scope("conv2"):
        h = _conv_bn(h, maps, 3, 1, test)
    if stride != 1 or x.shape[1] != maps:
        with nn.parameter_scope("shortcut"):
            x = _conv_bn(x, maps, 1, stride, test)
    return F.relu(h + x)


def resnet18(x, classes=10, test=False):
    """CIFAR-style ResNet-18: 3x3 stem of 64 maps, four stages of two BasicBlocks
    (64, 128, 256, 512 maps; stages 2-4 halve the resolution), global average pooling and
    an affine classifier. ``test=True`` uses the running BN statistics (inference)."""
    with nn.parameter_scope("resnet18"):
        with nn.parameter_scope("stem"):
            h = F.relu(_conv_bn(x, 64, 3, 1, test))
        for stage, maps in enumerate((64, 128, 256, 512)):
            for block in range(2):
                stride = 2 if stage > 0 and block == 0 else 1
                with nn.parameter_scope(f"stage{stage + 1}_block{block + 1}"):
                    h = _basic_block(h, maps, stride, test)
        h = F.global_average_pooling(h)
        with nn.parameter_scope("classifier"):
            return PF.affine(h, classes)


def transformer_encoder(x, layers=2, heads=8, feedforward=1024):
    """A post-norm Transformer encoder (as PyTorch's ``nn.TransformerEncoderLayer``):
    per layer, multi-head self-attention (one affine for queries, keys and values, scaled
    dot products by ``F.batch_matmul``, softmax) and a GELU feed-forward, each added to its
    input and layer-normalized over the features. ``x`` is (batch, time, features)."""
    batch, time, dim = x.shape
    head = dim // heads
    h = x
    for layer in range(layers):
        with nn.parameter_scope(f"encoder{layer + 1}"):
            with nn.parameter_scope("qkv"):
                qkv = PF.affine(h, (3, heads, head), base_axis=2)      # (B, T, 3, H, D)
            q, k, v = F.split(F.transpose(qkv, (2, 0, 3, 1, 4)), axis=0)  # (B, H, T, D)
            q, k, v = (F.reshape(a, (batch * heads, time, head)) for a in (q, k, v))
            scores = F.batch_matmul(q, k, transpose_b=True) * (head ** -0.5)
            a = F.batch_matmul(F.softmax(scores, axis=2), v)           # (B*H, T, D)
            a = F.reshape(F.transpose(F.reshape(a, (batch, heads, time, head)),
                                      (0, 2, 1, 3)), (batch, time, dim))
            with nn.parameter_scope("out"):
                a = PF.affine(a, dim, base_axis=2)
            with nn.parameter_scope("norm1"):
                h = PF.layer_normalization(h + a, batch_axis=(0, 1))
            with nn.parameter_scope("ff1"):
                f = F.gelu(PF.affine(h, feedforward, base_axis=2))
            with nn.parameter_scope("ff2"):
                f = PF.affine(f, dim, base_axis=2)
            with nn.parameter_scope("norm2"):
                h = PF.layer_normalization(h + f, batch_axis=(0, 1))
    return h
