"""Every ImageNet class of nnabla 1.39 built with pretrained=False: its input size, output
shape, use_up_to keys (the published files' variable names and shapes), parameter count
against the reference implementations of the same architectures, training vs. inference
graphs, the auxiliary towers, and the download error offline."""
import doctest
import importlib
import inspect

import numpy as np
import pytest

import nnabla as nn
import nnabla.models.imagenet as imagenet
from nnabla.utils.download import DownloadError


@pytest.fixture(autouse=True)
def fresh_parameters(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("NNABLA_MODELS_PRETRAINED", raising=False)
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def conv(k, inmaps, outmaps, bias=True, group=1):
    return k * k * inmaps // group * outmaps + (outmaps if bias else 0)


def affine(inputs, outputs):
    return inputs * outputs + outputs


def googlenet_count(aux=False):
    """Szegedy et al. 2014, Table 1 (convolutions with biases), plus the 1000-way
    classifier; with the two auxiliary towers of section 5 when ``aux``."""
    total = conv(7, 3, 64) + conv(1, 64, 64) + conv(3, 64, 192)
    modules = [(192, 64, 96, 128, 16, 32, 32), (256, 128, 128, 192, 32, 96, 64),
               (480, 192, 96, 208, 16, 48, 64), (512, 160, 112, 224, 24, 64, 64),
               (512, 128, 128, 256, 24, 64, 64), (512, 112, 144, 288, 32, 64, 64),
               (528, 256, 160, 320, 32, 128, 128), (832, 256, 160, 320, 32, 128, 128),
               (832, 384, 192, 384, 48, 128, 128)]
    for inmaps, n1, r3, n3, r5, n5, proj in modules:
        total += (conv(1, inmaps, n1) + conv(1, inmaps, r3) + conv(3, r3, n3)
                  + conv(1, inmaps, r5) + conv(5, r5, n5) + conv(1, inmaps, proj))
    total += affine(1024, 1000)
    if aux:
        for inmaps in (512, 528):
            total += conv(1, inmaps, 128) + affine(128 * 4 * 4, 1024) + affine(1024, 1000)
    return total


def nin_count():
    """The ImageNet NIN of the Caffe model zoo (conv1, cccp1-8, conv2-4), biases included."""
    layers = [(11, 3, 96), (1, 96, 96), (1, 96, 96), (5, 96, 256), (1, 256, 256),
              (1, 256, 256), (3, 256, 384), (1, 384, 384), (1, 384, 384), (3, 384, 1024),
              (1, 1024, 1024), (1, 1024, 1000)]
    return sum(conv(*layer) for layer in layers)


def alexnet_count():
    """Krizhevsky et al. 2012, section 3.5, as one tower (no grouped convolutions)."""
    return (conv(11, 3, 96) + conv(5, 96, 256) + conv(3, 256, 384) + conv(3, 384, 384)
            + conv(3, 384, 256) + affine(256 * 6 * 6, 4096) + affine(4096, 4096)
            + affine(4096, 1000))


def shufflenet_count(stem, stages, groups=3):
    """Zhang et al. 2017, Table 1 (g = 3; stage widths scaled by s) and Figure 2 (units:
    bottleneck = output / 4, the first 1x1 of stage 2 not grouped, batch normalization
    after every convolution); the stem widths (12, 24, 48) of the authors' release."""
    bn = 2   # gamma and beta per channel
    total = conv(3, 3, stem, bias=False) + bn * stem
    inmaps = stem
    for stage, (outmaps, units) in enumerate(zip(stages, (4, 8, 4))):
        for unit in range(units):
            branch = outmaps - inmaps if unit == 0 else outmaps
            mid = outmaps // 4
            first_group = 1 if (stage, unit) == (0, 0) else groups
            total += conv(1, inmaps, mid, False, first_group) + bn * mid
            total += 9 * mid + bn * mid
            total += conv(1, mid, branch, False, groups) + bn * branch
            inmaps = outmaps
    return total + affine(inmaps, 1000)


# (class, input size, trainable parameter count, where the count comes from). The
# counts exclude the batch normalizations' running statistics, as torchvision's and
# Keras's trainable counts do.
MODELS = [
    ("ResNet18", 224, 11_689_512, "torchvision resnet18"),
    ("ResNet50", 224, 25_557_032, "torchvision resnet50"),
    ("ResNeXt50", 224, 25_028_904, "torchvision resnext50_32x4d"),
    ("ResNeXt101", 224, 44_177_704, "Cadene pretrainedmodels resnext101_32x4d"),
    ("SENet", 224, 115_088_984, "Cadene pretrainedmodels senet154"),
    ("MobileNet", 224, 4_231_976, "Keras MobileNet(alpha=1.0), trainable"),
    ("MobileNetV2", 224, 3_504_872, "torchvision mobilenet_v2"),
    ("SqueezeNetV10", 227, 1_248_424, "torchvision squeezenet1_0"),
    ("SqueezeNetV11", 227, 1_235_496, "torchvision squeezenet1_1"),
    ("VGG11", 224, 132_863_336, "torchvision vgg11"),
    ("NIN", 227, nin_count(), "Caffe model zoo NIN-ImageNet layers"),
    ("DenseNet", 224, 28_681_000, "torchvision densenet161"),
    ("InceptionV3", 299, 23_834_568, "imgclsmob inceptionv3 (no auxiliary tower)"),
    ("Xception", 299, 22_855_952, "Keras Xception, trainable"),
    ("GoogLeNet", 224, googlenet_count(), "Szegedy et al. 2014, Table 1"),
    ("ShuffleNet05", 224, shufflenet_count(12, (120, 240, 480)), "Zhang et al. 2017"),
    ("ShuffleNet10", 224, shufflenet_count(24, (240, 480, 960)), "Zhang et al. 2017"),
    ("ShuffleNet20", 224, shufflenet_count(48, (480, 960, 1920)), "Zhang et al. 2017"),
    ("AlexNet", 227, alexnet_count(), "Krizhevsky et al. 2012"),
]

# use_up_to key -> (variable name, shape at batch 1) for each class
_RESNET50_KEYS = {"classifier": ("Affine", (1, 1000)),
                  "pool": ("AveragePooling", (1, 2048, 1, 1)),
                  "lastconv": ("Add2_7_RepeatStart_4[1]", (1, 2048, 7, 7)),
                  "lastconv+relu": ("ReLU_25_RepeatStart_4[1]", (1, 2048, 7, 7))}


def _shufflenet_keys(maps):
    return {"classifier": ("Affine", (1, 1000)), "pool": ("AveragePooling", (1, maps, 1, 1)),
            "lastconv": ("Add2_3_RepeatStart_3[2]", (1, maps, 7, 7)),
            "lastconv+relu": ("ReLU_8_RepeatStart_3[2]", (1, maps, 7, 7))}


def _squeezenet_keys(prefix):
    return {"classifier": (f"{prefix}Reshape", (1, 1000)),
            "pool": (f"{prefix}AveragePooling", (1, 1000, 1, 1)),
            "lastconv": (f"{prefix}Convolution_2", (1, 1000, 13, 13)),
            "lastconv+relu": (f"{prefix}ReLU_2", (1, 1000, 13, 13))}


KEYS = {
    "ResNet18": {"classifier": ("Affine", (1, 1000)),
                 "pool": ("AveragePooling", (1, 512, 1, 1)),
                 "lastconv": ("Add2_7_RepeatStart_4[0]", (1, 512, 7, 7)),
                 "lastconv+relu": ("ReLU_25_RepeatStart_4[0]", (1, 512, 7, 7))},
    "ResNet50": _RESNET50_KEYS, "ResNeXt50": _RESNET50_KEYS, "ResNeXt101": _RESNET50_KEYS,
    "SENet": _RESNET50_KEYS,
    "MobileNet": {"classifier": ("Affine", (1, 1000)),
                  "pool": ("AveragePooling", (1, 1024, 1, 1)),
                  "lastconv": ("BatchNormalization_19", (1, 1024, 7, 7)),
                  "lastconv+relu": ("ReLU_19", (1, 1024, 7, 7))},
    "MobileNetV2": {"classifier": ("Reshape", (1, 1000)),
                    "pool": ("AveragePooling", (1, 1280, 1, 1)),
                    "lastconv": ("BatchNormalization_2", (1, 1280, 7, 7)),
                    "lastconv+relu": ("ReLU_2", (1, 1280, 7, 7))},
    "SqueezeNetV10": _squeezenet_keys(""), "SqueezeNetV11": _squeezenet_keys("SqueezeNet/"),
    "VGG11": {"classifier": ("VGG11/Affine_3", (1, 1000)),
              "pool": ("VGG11/MaxPooling_5", (1, 512, 7, 7)),
              "lastconv": ("VGG11/Convolution_12", (1, 512, 14, 14)),
              "lastconv+relu": ("VGG11/ReLU_12", (1, 512, 14, 14)),
              "lastfeature": ("VGG11/Affine_2", (1, 4096))},
    "NIN": {"classifier": ("NIN/Reshape", (1, 1000)),
            "pool": ("NIN/AveragePooling", (1, 1000, 1, 1)),
            "lastconv": ("NIN/Convolution_3", (1, 1000, 6, 6)),
            "lastconv+relu": ("NIN/ReLU_3", (1, 1000, 6, 6))},
    "DenseNet": {"classifier": ("DenseNet/Affine", (1, 1000)),
                 "pool": ("DenseNet/AveragePooling_4", (1, 2208, 1, 1)),
                 "lastconv": ("DenseNet/BatchNormalization_5", (1, 2208, 7, 7)),
                 "lastconv+relu": ("DenseNet/ReLU_5", (1, 2208, 7, 7))},
    "InceptionV3": {"classifier": ("Affine", (1, 1000)),
                    "pool": ("AveragePooling_2", (1, 2048, 1, 1)),
                    "prepool": ("Inception_11/Concatenate", (1, 2048, 8, 8))},
    "Xception": {"classifier": ("Unit/Affine", (1, 1000)),
                 "pool": ("Unit/AveragePooling", (1, 2048, 1, 1)),
                 "lastconv": ("Unit/SeparableConv_13/SepConvBN", (1, 2048, 10, 10)),
                 "lastconv+relu": ("Unit/ReLU_14", (1, 2048, 10, 10))},
    "GoogLeNet": {"classifier": ("Affine_5", (1, 1000)),
                  "pool": ("AveragePooling_3", (1, 1024, 1, 1)),
                  "prepool": ("Concatenate_9", (1, 1024, 7, 7))},
    "ShuffleNet05": _shufflenet_keys(480), "ShuffleNet10": _shufflenet_keys(960),
    "ShuffleNet20": _shufflenet_keys(1920),
    "AlexNet": {"classifier": ("TrainNet/Affine_3", (1, 1000)),
                "pool": ("TrainNet/MaxPooling_3", (1, 256, 6, 6)),
                "lastconv": ("TrainNet/Convolution_5", (1, 256, 13, 13)),
                "lastconv+relu": ("TrainNet/ReLU_5", (1, 256, 13, 13)),
                "lastfeature": ("TrainNet/Affine_2", (1, 4096))},
}


def trainable_count():
    return sum(v.size for k, v in nn.get_parameters(grad_only=False).items()
               if not k.endswith(("/bn/mean", "/bn/var")))


@pytest.mark.parametrize("name, size, count, source", MODELS, ids=[m[0] for m in MODELS])
def test_architecture_has_the_published_keys_and_the_reference_parameter_count(
        name, size, count, source, zero_initial_values):
    model = getattr(imagenet, name)(pretrained=False)
    assert model.input_shape == (3, size, size)
    y = model()
    assert y.shape == (1, 1000)
    assert trainable_count() == count, source
    assert {k for k in model._KEY_VARIABLE if not k.startswith("_")} == set(KEYS[name])
    for key, (variable, shape) in KEYS[name].items():
        y = model(use_up_to=key)
        assert (y.name, y.shape) == (variable, shape), key


def test_every_imagenet_class_of_nnabla_is_covered():
    classes = {"ResNet", "ResNet18", "ResNet34", "ResNet50", "ResNet101", "ResNet152",
               "MobileNet", "MobileNetV2", "SENet", "SqueezeNet", "SqueezeNetV10",
               "SqueezeNetV11", "VGG", "VGG11", "VGG13", "VGG16", "NIN", "DenseNet",
               "InceptionV3", "Xception", "GoogLeNet", "ResNeXt", "ResNeXt50", "ResNeXt101",
               "ShuffleNet", "ShuffleNet10", "ShuffleNet05", "ShuffleNet20", "AlexNet"}
    assert classes <= set(dir(imagenet))
    tested = {m[0] for m in MODELS}
    families = {"ResNet", "VGG", "SqueezeNet", "ResNeXt", "ShuffleNet"}
    assert classes - tested - families <= {"ResNet34", "ResNet101", "ResNet152", "VGG13",
                                           "VGG16"}


# nnabla 1.39's constructor arguments (ours add `pretrained` last)
SIGNATURES = [("SqueezeNet", "version", "v1.1"), ("ResNeXt", "num_layers", 50),
              ("ShuffleNet", "scaling_factor", 10), ("ResNet", "num_layers", 18),
              ("VGG", "num_layers", 11)]


@pytest.mark.parametrize("name, argument, default", SIGNATURES)
def test_constructors_take_nnabla_arguments(name, argument, default):
    parameters = list(inspect.signature(getattr(imagenet, name)).parameters.values())
    assert [(p.name, p.default) for p in parameters] == [(argument, default),
                                                        ("pretrained", None)]


@pytest.mark.parametrize("name, argument, bad", [
    ("SqueezeNet", "version", "v2.0"), ("ResNeXt", "num_layers", 152),
    ("ShuffleNet", "scaling_factor", 15)])
def test_unknown_variant_is_refused_with_the_choices(name, argument, bad):
    with pytest.raises(ValueError, match=f"{argument} must be chosen from"):
        getattr(imagenet, name)(bad, pretrained=False)


def test_call_signature_is_nnabla_s():
    expected = ["self", "input_var", "use_from", "use_up_to", "training",
                "force_global_pooling", "check_global_pooling", "returns_net", "verbose"]
    for name in ("SqueezeNet", "ResNeXt", "ShuffleNet", "Xception", "DenseNet"):
        assert list(inspect.signature(getattr(imagenet, name).__call__).parameters) == expected
    for name in ("GoogLeNet", "InceptionV3", "AlexNet"):
        parameters = inspect.signature(getattr(imagenet, name).__call__).parameters
        assert list(parameters) == expected + ["with_aux_tower"]
        assert parameters["with_aux_tower"].default is False


def _function_types(y):
    types = []
    y.visit(lambda f: types.append((f.info.type_name, dict(f.info.args))))
    return types


def test_training_uses_batch_statistics_trainable_parameters_and_dropout():
    model = imagenet.Xception(pretrained=False)
    x = nn.Variable((1, 3, 299, 299))
    inference, training = model(x), model(x, training=True)
    bn_flags = {args["batch_stat"] for t, args in _function_types(training)
                if t == "BatchNormalization"}
    assert bn_flags == {True}
    assert {args["batch_stat"] for t, args in _function_types(inference)
            if t == "BatchNormalization"} == {False}
    assert "Dropout" in [t for t, _ in _function_types(training)]
    assert "Dropout" not in [t for t, _ in _function_types(inference)]
    assert nn.get_parameters()["Unit/SeparableConv_13/Convolution/conv/W"].need_grad


def test_training_and_inference_give_different_outputs():
    nn.seed(3)
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).rand(2, 3, 96, 96))
    model = imagenet.ShuffleNet05(pretrained=False)
    y_inference = model(x, force_global_pooling=True)
    y_training = model(x, training=True, force_global_pooling=True)
    nn.forward_all([y_inference, y_training])
    assert np.all(np.isfinite(y_inference.d)) and np.all(np.isfinite(y_training.d))
    assert not np.allclose(y_inference.d, y_training.d)
    # the training forward moved the running statistics (initially 0 and 1)
    mean = nn.get_parameters(grad_only=False)["BatchNormalization/bn/mean"].d
    assert np.abs(mean).max() > 0


def test_squeezenet_dropout_only_in_training():
    nn.seed(4)
    x = nn.Variable.from_numpy_array(np.random.RandomState(1).rand(1, 3, 99, 99))
    model = imagenet.SqueezeNetV11(pretrained=False)
    y_inference = model(x, force_global_pooling=True)
    y_training = model(x, training=True, force_global_pooling=True)
    nn.forward_all([y_inference, y_training])
    assert y_inference.shape == (1, 1000)
    assert not np.allclose(y_inference.d, y_training.d)


def test_initial_values_are_glorot_uniform_and_follow_the_seed():
    nn.seed(11)
    imagenet.MobileNet(pretrained=False)()
    first = nn.get_parameters(grad_only=False)["Affine/affine/W"].d.copy()
    limit = np.sqrt(6 / (1024 + 1000))
    assert first.dtype == np.float32 and np.abs(first).max() <= limit
    assert first.std() == pytest.approx(limit / np.sqrt(3), rel=0.01)
    nn.clear_parameters()
    nn.seed(11)
    imagenet.MobileNet(pretrained=False)()
    np.testing.assert_array_equal(nn.get_parameters(grad_only=False)["Affine/affine/W"].d,
                                  first)


# the towers' outputs with_aux_tower gives: as nnabla 1.39 from the published files (it
# drops each tower's classifier with its loss), the features before the classifier
AUX_OUTPUTS = {"GoogLeNet": [("Dropout", (1, 1024)), ("Dropout_2", (1, 1024))],
               "InceptionV3": [("Conv_7/ReLU", (1, 768, 1, 1))]}
AUX_CLASSIFIERS = {"GoogLeNet": ["_aux_classifier_1", "_aux_classifier_2"],
                   "InceptionV3": ["_aux_classifier"]}


@pytest.mark.parametrize("name", ["GoogLeNet", "InceptionV3"])
def test_aux_towers_only_in_training(name, zero_initial_values):
    model = getattr(imagenet, name)(pretrained=False)
    with pytest.raises(ValueError, match="with_aux_tower=True needs training=True"):
        model(with_aux_tower=True)
    outputs = model(training=True, with_aux_tower=True)
    assert [(y.name, y.shape) for y in outputs] == AUX_OUTPUTS[name] + [
        (KEYS[name]["classifier"][0], (1, 1000))]
    net = model(training=True, with_aux_tower=True, returns_net=True)
    assert list(net.outputs) == [y.name for y in outputs]
    assert [t for t, _ in _function_types(outputs[-1])].count("Dropout") == 1
    for key in AUX_CLASSIFIERS[name]:
        y = model(use_up_to=key, training=True)
        assert (y.name, y.shape) == (model._KEY_VARIABLE[key], (1, 1000))


def test_aux_tower_parameter_counts(zero_initial_values):
    googlenet = imagenet.GoogLeNet(pretrained=False)
    for key in AUX_CLASSIFIERS["GoogLeNet"] + ["classifier"]:
        googlenet(use_up_to=key, training=True)
    assert trainable_count() == googlenet_count(aux=True)
    nn.clear_parameters()
    inception = imagenet.InceptionV3(pretrained=False)
    inception(use_up_to="_aux_classifier", training=True)
    inception(training=True)
    assert trainable_count() == 27_161_264   # torchvision inception_v3 (aux_logits=True)


def test_global_pooling_checks_and_forcing(zero_initial_values):
    model = imagenet.DenseNet(pretrained=False)
    x = nn.Variable((1, 3, 320, 320))
    with pytest.raises(ValueError, match="force_global_pooling=True"):
        model(x)
    assert model(x, force_global_pooling=True).shape == (1, 1000)
    assert model(x, use_up_to="lastconv").shape == (1, 2208, 10, 10)


def test_senet_squeeze_poolings_are_fixed_to_the_224_input(zero_initial_values):
    with pytest.raises(ValueError):
        imagenet.SENet(pretrained=False)(nn.Variable((1, 3, 448, 448)), use_up_to="lastconv",
                                         force_global_pooling=True)


# published file (local name) and its download path, per class
FILES = [
    ("SqueezeNetV10", "SqueezeNet-1.0.nnp", "SqueezeNet-1.0/SqueezeNet-1.0.nnp"),
    ("SqueezeNetV11", "SqueezeNet-1.1.nnp", "SqueezeNet-1.1/SqueezeNet-1.1.nnp"),
    ("InceptionV3", "Inception-v3.nnp", "Inception-v3/Inception-v3.nnp"),
    ("GoogLeNet", "GoogLeNet.nnp", "GoogLeNet/GoogLeNet.nnp"),
    ("ResNeXt50", "ResNeXt-50.nnp", "ResNeXt-50/ResNeXt-50.nnp"),
    ("ResNeXt101", "ResNeXt-101.nnp", "ResNeXt-101/ResNeXt-101.nnp"),
    ("ShuffleNet10", "ShuffleNet.nnp", "ShuffleNet/ShuffleNet.nnp"),
    ("ShuffleNet05", "ShuffleNet-.05x.nnp", "ShuffleNet-0.5x/ShuffleNet-0.5x.nnp"),
    ("ShuffleNet20", "ShuffleNet-2.0x.nnp", "ShuffleNet-2.0x/ShuffleNet-2.0x.nnp"),
    ("MobileNet", "MobileNet.nnp", "MobileNet/MobileNet.nnp"),
    ("SENet", "SENet-154.nnp", "SENet-154/SENet-154.nnp"),
    ("NIN", "NIN.nnp", "NIN/NIN.nnp"),
    ("DenseNet", "DenseNet-161.nnp", "DenseNet-161/DenseNet-161.nnp"),
    ("Xception", "Xception.nnp", "Xception/Xception.nnp"),
    ("AlexNet", "AlexNet.nnp", "AlexNet/AlexNet.nnp"),
]


@pytest.mark.parametrize("name, local, remote", FILES, ids=[f[0] for f in FILES])
def test_offline_without_the_file_names_url_and_destination(name, local, remote,
                                                            monkeypatch, tmp_path):
    monkeypatch.setenv("NNABLA_MODELS_URL_BASE", "http://127.0.0.1:9/models/")
    with pytest.raises(DownloadError) as error:
        getattr(imagenet, name)()
    message = str(error.value)
    assert f"http://127.0.0.1:9/models/imagenet/{remote}" in message
    assert str(tmp_path / "nnabla_data" / "nnp_models" / "imagenet" / local) in message


@pytest.mark.parametrize("module", ["resnet", "resnext", "senet", "mobilenet", "squeezenet",
                                    "vgg", "nin", "densenet", "inception", "xception",
                                    "googlenet", "shufflenet", "alexnet"])
def test_docstring_examples_run(module, zero_initial_values):
    results = doctest.testmod(importlib.import_module(f"nnabla.models.imagenet.{module}"))
    assert results.attempted > 0 and results.failed == 0


# How nnabla 1.39's classes adapt their published files (read from its source): network,
# input variable, augmentation function, final pooling made global, dropouts removed in
# inference.
FILE_ADAPTATION = {
    "ResNet18": ("Training", "InputX", "ImageAugmentationX", "AveragePooling", ()),
    "MobileNet": ("Training", "InputX", "ImageAugmentationX", "AveragePooling", ()),
    "MobileNetV2": ("Training", "ImageAugmentationX", "ImageAugmentationX", "AveragePooling",
                    ()),
    "SENet": ("Training", "InputX", "ImageAugmentationX", "AveragePooling", ("Dropout",)),
    "SqueezeNetV10": ("Training", "TrainingInput", "ImageAugmentationX", "AveragePooling",
                      ("Dropout",)),
    "SqueezeNetV11": ("Training", "TrainingInput", "ImageAugmentationX",
                      "SqueezeNet/AveragePooling", ("SqueezeNet/Dropout",)),
    "VGG16": ("Training", "TrainingInput", "ImageAugmentationX", None,
              ("VGG16/Dropout_1", "VGG16/Dropout_2")),
    "NIN": ("Training", "TrainingInput", "ImageAugmentationX", "NIN/AveragePooling",
            ("NIN/Dropout",)),
    "DenseNet": ("Train", "InputX", "ImageAugmentationX", "DenseNet/AveragePooling_4", ()),
    "InceptionV3": ("Train", "Iv3TrainInput", "ImageAugmentation", "AveragePooling_2",
                    ("Dropout",)),
    "Xception": ("Training", "InputX", "ImageAugmentation", "Unit/AveragePooling",
                 ("Unit/Dropout",)),
    "GoogLeNet": ("Train", "InputX", "ImageAugmentationX", "AveragePooling_3", ("Dropout_3",)),
    "ResNeXt101": ("Training", "InputX", "ImageAugmentationX", "AveragePooling", ()),
    "ShuffleNet20": ("Training", "InputX", "ImageAugmentationX", "AveragePooling", ()),
    "AlexNet": ("Training", "TrainingInput", "ImageAugmentationX", None,
                ("TrainNet/Dropout", "TrainNet/Dropout_2")),
}


@pytest.mark.parametrize("name", sorted(FILE_ADAPTATION))
def test_published_files_are_adapted_as_nnabla_does(name):
    model = getattr(imagenet, name)(pretrained=False)
    fmt = model._format_dict()
    pool = model._pool_name and model._pool_name.format(**fmt)
    dropouts = tuple(d.format(**fmt) for d in model._dropouts)
    assert (model._nnp_network, model._nnp_input, model._augmentation, pool,
            dropouts) == FILE_ADAPTATION[name]
