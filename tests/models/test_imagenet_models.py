"""Tests of nnabla.models.imagenet: architectures built with pretrained=False (shapes, the
published files' names and use_up_to keys), and the download path offline."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.models.imagenet as imagenet
from nnabla.models.imagenet import ResNet18, ResNet50, SENet
from nnabla.utils.download import DownloadError


@pytest.fixture(autouse=True)
def fresh_parameters(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    nn.clear_parameters()
    yield
    nn.clear_parameters()


# Neural Network Console's ResNet-18 (a project exported as Python by NNC): the layers
# outside the repeat blocks, and those of the last block RepeatStart_4.
RESNET18_CONVOLUTIONS = ["Convolution", "Convolution_3", "Convolution_4", "Convolution_9",
                         "Convolution_10", "Convolution_11", "Convolution_16",
                         "Convolution_17", "Convolution_18", "Convolution_23",
                         "Convolution_24", "Convolution_25"]


def test_resnet18_parameters_have_the_published_names_and_shapes():
    ResNet18(pretrained=False)(nn.Variable((1, 3, 224, 224)))
    params = nn.get_parameters(grad_only=False)
    for conv in RESNET18_CONVOLUTIONS:
        assert f"{conv}/conv/W" in params, conv
        bn = conv.replace("Convolution", "BatchNormalization")
        assert {f"{bn}/bn/{p}" for p in ("beta", "gamma", "mean", "var")} <= set(params)
    for repeat_conv in ("Convolution_6[0]", "Convolution_13[0]", "Convolution_27[0]",
                        "Convolution_28[0]"):
        assert f"{repeat_conv}/conv/W" in params
    assert params["Convolution/conv/W"].shape == (64, 3, 7, 7)
    assert params["Convolution_23/conv/W"].shape == (512, 256, 1, 1)
    assert params["Affine/affine/W"].shape == (512, 1000)
    assert len([k for k in params if k.endswith("/conv/W")]) == 20
    assert not any(k.endswith("/conv/b") for k in params)


@pytest.mark.parametrize("key, name, shape", [
    ("classifier", "Affine", (2, 1000)),
    ("pool", "AveragePooling", (2, 512, 1, 1)),
    ("lastconv", "Add2_7_RepeatStart_4[0]", (2, 512, 7, 7)),
    ("lastconv+relu", "ReLU_25_RepeatStart_4[0]", (2, 512, 7, 7)),
])
def test_resnet18_use_up_to_keys(key, name, shape):
    y = ResNet18(pretrained=False)(nn.Variable((2, 3, 224, 224)), use_up_to=key)
    assert (y.name, y.shape) == (name, shape)


def test_resnet50_forward_small_input_with_global_pooling_and_training():
    model = ResNet50(pretrained=False)
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).rand(2, 3, 64, 64))
    with pytest.raises(ValueError, match="force_global_pooling=True"):
        model(x)
    y = model(x, force_global_pooling=True)
    y.forward()
    assert y.shape == (2, 1000) and np.all(np.isfinite(y.d))
    net = model(x, force_global_pooling=True, returns_net=True, training=True)
    assert net.inputs["InputX"] is x
    assert net.variables["Convolution/conv/W"].need_grad
    bn = net.variables["ReLU_25_RepeatStart_4[1]"].parent.inputs[0].parent.inputs[1].parent
    assert bn.info.type_name == "BatchNormalization" and bn.info.args["batch_stat"]
    # 3 + 4 + 6 + 3 bottleneck blocks, 4 projection shortcuts, the stem and the head
    params = nn.get_parameters(grad_only=False)
    assert len([k for k in params if k.endswith("/conv/W")]) == 16 * 3 + 4 + 1
    assert params["Affine/affine/W"].shape == (2048, 1000)


def test_inference_parameters_are_fixed():
    y = ResNet18(pretrained=False)(nn.Variable((1, 3, 224, 224)), use_up_to="pool")
    assert not any(v.need_grad for v in nn.get_parameters(grad_only=False).values())
    assert y.parent.info.type_name == "AveragePooling"


def test_unknown_key_names_the_available_ones():
    with pytest.raises(ValueError, match="Available keys are"):
        ResNet18(pretrained=False)(use_up_to="fc")


def test_environment_variable_switches_off_pretrained(monkeypatch, tmp_path):
    monkeypatch.setenv("NNABLA_MODELS_PRETRAINED", "0")
    assert ResNet18().nnp is None
    assert not (tmp_path / "nnabla_data" / "nnp_models" / "imagenet" / "Resnet-18.nnp").exists()
    assert SENet().nnp is None


def test_offline_download_names_the_url_and_the_destination(monkeypatch, tmp_path):
    monkeypatch.delenv("NNABLA_MODELS_PRETRAINED", raising=False)
    monkeypatch.setenv("NNABLA_MODELS_URL_BASE", "http://127.0.0.1:9/models/")
    with pytest.raises(DownloadError) as error:
        ResNet18()
    message = str(error.value)
    assert "http://127.0.0.1:9/models/imagenet/Resnet-18/Resnet-18.nnp" in message
    assert str(tmp_path / "nnabla_data" / "nnp_models" / "imagenet" / "Resnet-18.nnp") in message
    assert not list((tmp_path / "nnabla_data" / "nnp_models" / "imagenet").iterdir())


@pytest.mark.parametrize("model, file", [(ResNet18, "Resnet-18.nnp"),
                                         (lambda: imagenet.ShuffleNet(5), "ShuffleNet-0.5x.nnp")])
def test_without_a_url_base_files_come_from_the_zenodo_record(monkeypatch, tmp_path, model,
                                                                file):
    # nnabla's maintainers moved the published files to Zenodo after 1.39 (flat file names)
    import nnabla.utils.download as download_module

    monkeypatch.delenv("NNABLA_MODELS_PRETRAINED", raising=False)
    monkeypatch.delenv("NNABLA_MODELS_URL_BASE", raising=False)
    asked = []

    def refuse(url, path, **kw):
        asked.append(url)
        raise DownloadError("offline")
    monkeypatch.setattr(download_module, "download", refuse)
    with pytest.raises(DownloadError):
        model()
    assert asked == ["https://zenodo.org/records/16962677/files/" + file]


@pytest.mark.parametrize("name, middle", [("ResNet50", (512, 512, 3, 3)),
                                          ("ResNeXt50", (1024, 32, 3, 3))])
def test_bottleneck_networks_number_layers_in_graph_order(name, middle, zero_initial_values):
    # seven convolutions a stage (projection shortcut first), so stage 4 is 23..29, and
    # six ReLUs a stage, which gives the keys' ReLU_25 (see ResNet._layer_names)
    getattr(imagenet, name)(pretrained=False)()
    params = nn.get_parameters(grad_only=False)
    assert params["Convolution_2/conv/W"].shape == (256, 64, 1, 1)
    assert params["Convolution_23/conv/W"].shape == (2048, 1024, 1, 1)
    assert params["Convolution_25/conv/W"].shape == middle
    assert params["Convolution_29[1]/conv/W"].shape == (2048, middle[0], 1, 1)
    assert params["BatchNormalization_29[1]/bn/gamma"].shape == (1, 2048, 1, 1)
    assert len([k for k in params if k.endswith("/conv/W")]) == 1 + 16 * 3 + 4
