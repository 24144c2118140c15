"""PyTorch twins of the networks in ``nets.py`` (same layers, shapes and initial scale),
for the ``torch_*.py`` twin scripts. Imported only when PyTorch is installed; PyTorch is
never a dependency of the project.
"""
import torch
import torch.nn.functional as TF
from torch import nn


def _conv_bn_tanh(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.Tanh()]


class DeepCNN(nn.Module):
    """The static-vs-dynamic tutorial's CNN (``nets.deep_cnn``)."""

    def __init__(self):
        super().__init__()
        layers = _conv_bn_tanh(1, 64)
        layers += _conv_bn_tanh(64, 128)
        for _ in range(9):
            layers += _conv_bn_tanh(128, 128)
        layers += _conv_bn_tanh(128, 512)
        self.features = nn.Sequential(*layers, nn.AvgPool2d(2))
        self.fc = nn.Linear(512 * 4 * 4, 1024)
        self.classifier = nn.Linear(1024, 10)

    def forward(self, x):
        h = self.features(x).flatten(1)
        return self.classifier(torch.tanh(self.fc(h)))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        h = TF.relu(self.bn1(self.conv1(x)))
        return TF.relu(self.bn2(self.conv2(h)) + self.shortcut(x))


class ResNet18(nn.Module):
    """CIFAR-style ResNet-18 (``nets.resnet18``)."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU())
        blocks, cin = [], 64
        for stage, maps in enumerate((64, 128, 256, 512)):
            for block in range(2):
                blocks.append(BasicBlock(cin, maps, 2 if stage > 0 and block == 0 else 1))
                cin = maps
        self.blocks = nn.Sequential(*blocks)
        self.classifier = nn.Linear(512, classes)

    def forward(self, x):
        h = self.blocks(self.stem(x))
        return self.classifier(h.mean(dim=(2, 3)))


def _gelu_tanh(x):
    # nnabla's GELU is the tanh approximation
    return TF.gelu(x, approximate="tanh")


def transformer_encoder(dim=256, layers=2, heads=8, feedforward=1024):
    """``nets.transformer_encoder``: PyTorch's own post-norm encoder layers, no dropout."""
    layer = nn.TransformerEncoderLayer(dim, heads, feedforward, dropout=0.0,
                                       activation=_gelu_tanh, batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
