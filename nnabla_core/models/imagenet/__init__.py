"""ImageNet classifiers (``nnabla.models.imagenet``)."""
from .resnet import ResNet, ResNet18, ResNet34, ResNet50, ResNet101, ResNet152  # noqa: F401
from .alexnet import AlexNet  # noqa: F401
from .densenet import DenseNet  # noqa: F401
from .googlenet import GoogLeNet  # noqa: F401
from .inception import InceptionV3  # noqa: F401
from .mobilenet import MobileNet, MobileNetV2  # noqa: F401
from .nin import NIN  # noqa: F401
from .resnext import ResNeXt, ResNeXt50, ResNeXt101  # noqa: F401
from .senet import SENet  # noqa: F401
from .shufflenet import ShuffleNet, ShuffleNet05, ShuffleNet10, ShuffleNet20  # noqa: F401
from .squeezenet import SqueezeNet, SqueezeNetV10, SqueezeNetV11  # noqa: F401
from .vgg import VGG, VGG11, VGG13, VGG16  # noqa: F401
from .xception import Xception  # noqa: F401
