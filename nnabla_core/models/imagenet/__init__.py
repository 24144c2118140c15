"""ImageNet classifiers (``nnabla.models.imagenet``)."""
from .resnet import ResNet, ResNet18, ResNet34, ResNet50, ResNet101, ResNet152  # noqa: F401
