"""Tests of nnabla.models.object_detection (YoloV2) and semantic_segmentation
(DeepLabV3plus).

* pretrained=False builds nnabla-examples' networks: saved with our nnabla.utils.save,
  their functions (type, order, wiring) and parameters (names, shapes) equal those of the
  networks nnabla 1.39 saved from nnabla-examples' own model code
  (tests/data/models/detection_models_1.39.json, written by
  tools/record_detection_models.py), as do nnabla 1.39's model classes' output shapes and
  trainable-parameter counts on those files.
* The published files were written by an older nnabla, which named functions
  ``Convolution``, ``Convolution_2`` ... and their outputs ``<function>_Output`` (the names
  nnabla 1.39's model classes refer to). The tests make such a file from our network (no
  download) and check the pretrained path on it: key shapes at another input size, and
  the same numbers as pretrained=False with the same parameters.
* YoloV2's post-processing against numpy; the offline download error; the utilities.
"""
import io
import json
import os
import re
import zipfile

import numpy as np
import pytest

import nnabla as nn
from nnabla.models.object_detection import YoloV2
from nnabla.models.object_detection import utils as od_utils
from nnabla.models.semantic_segmentation import DeepLabV3plus
from nnabla.models.semantic_segmentation import utils as ss_utils
from nnabla.utils.download import DownloadError
from nnabla.utils.save import save

RECORDED = os.path.join(os.path.dirname(__file__), "..", "data", "models",
                        "detection_models_1.39.json")


@pytest.fixture(scope="module")
def recorded():
    with open(RECORDED) as fd:
        return json.load(fd)


def _built_parameters(build):
    nn.clear_parameters()
    build()
    params = dict(nn.get_parameters(grad_only=False))
    nn.clear_parameters()
    return params


@pytest.fixture(scope="module")
def yolo_params():
    """YoloV2('voc')'s fresh parameters, made once (drawing 50 million numbers is slow)."""
    return _built_parameters(lambda: YoloV2("voc", pretrained=False)(nn.Variable((1, 3, 64, 64))))


@pytest.fixture(scope="module")
def deeplab_params():
    """DeepLabV3plus's fresh parameters, made once."""
    return _built_parameters(
        lambda: DeepLabV3plus("voc", pretrained=False)(nn.Variable((1, 3, 33, 33))))


def _use(params, exclude=""):
    """Put ``params`` (but those starting with ``exclude``) in the current scope, so the
    models reuse them instead of drawing new ones."""
    for name, v in params.items():
        if not (exclude and name.startswith(exclude)):
            nn.parameter.set_parameter(name, v)


@pytest.fixture(autouse=True)
def fresh_parameters(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("NNABLA_MODELS_PRETRAINED", raising=False)
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _saved_network(x, y, parameters=None):
    """Our nnabla.utils.save of x -> y (network 'runtime'), parsed."""
    from google.protobuf import text_format
    from nnabla.utils import nnabla_pb2

    buffer = io.BytesIO()
    save(buffer, {"networks": [{"name": "runtime", "batch_size": 1, "outputs": {"y": y},
                                "names": {"x": x}}],
                  "executors": [{"name": "runtime", "network": "runtime", "data": ["x"],
                                 "output": ["y"]}]},
         extension=".nnp", parameters=parameters or {})
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
        members = {n: z.read(n) for n in z.namelist()}
    proto = nnabla_pb2.NNablaProtoBuf()
    text_format.Merge(members["network.nntxt"].decode(), proto)
    return proto, members


def _structure(functions):
    """[(name, type, inputs as producing-function names or the variable's name)]."""
    strip = [(n.replace("@runtime/", ""), t, [i.replace("@runtime/", "") for i in ins],
              [o.replace("@runtime/", "") for o in outs]) for n, t, ins, outs in functions]
    producer = {o: n for n, _, _, outs in strip for o in outs}
    return [(n, t, [producer.get(i, i) for i in ins]) for n, t, ins, _ in strip]


def _old_style(proto, members):
    """Rename an nnp as the published files are named: the k-th function of a type
    ``Type_k`` (``Type`` for the first), its outputs ``<function>_Output``."""
    from google.protobuf import text_format

    net = proto.network[0]
    renames = {}
    for f in net.function:
        m = re.fullmatch(r"(.*)_(\d+)", f.name)
        new = f"{m.group(1)}_{int(m.group(2)) + 1}" if m and m.group(1) == f.type else f.name
        for i, o in enumerate(f.output):
            if o not in ("x", "y"):
                renames[o] = f"{new}_Output" if len(f.output) == 1 else f"{new}_Output_{i}"
        f.name = new
    for f in net.function:
        f.input[:] = [renames.get(n, n) for n in f.input]
        f.output[:] = [renames.get(n, n) for n in f.output]
    for v in net.variable:
        v.name = renames.get(v.name, v.name)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            if name == "network.nntxt":
                data = text_format.MessageToString(proto).encode()
            z.writestr(name, data)
    return out.getvalue()


def _install(tmp_path, category, name, data):
    folder = tmp_path / "nnabla_data" / "nnp_models" / category
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


# -- YoloV2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset", ["voc", "coco"])
def test_yolov2_architecture_is_nnabla_examples_network(recorded, yolo_params, dataset):
    entry = recorded[f"yolov2-{dataset}"]
    _use(yolo_params, exclude="detection/" if dataset == "coco" else "")
    x = nn.Variable((1, 3, 416, 416))
    y = YoloV2(dataset, pretrained=False)(x)
    proto, _ = _saved_network(x, y)
    ours = [[f.name, f.type, list(f.input), list(f.output)] for f in proto.network[0].function]
    assert _structure(ours) == _structure(entry["functions"])
    params = {k: list(v.shape) for k, v in nn.get_parameters(grad_only=False).items()}
    assert params == entry["parameters"]
    detection = [c for c in entry["calls"] if c["key"] == "detection"]
    assert [list(y.shape)] == [c["shape"] for c in detection if not c["training"]]
    net = YoloV2(dataset, pretrained=False)(x, training=True, returns_net=True)
    trainable = [c["n_need_grad"] for c in detection if c["training"]]
    assert [sum(v.need_grad for v in nn.get_parameters(grad_only=False).values())] == trainable
    assert list(net.inputs) == ["x"] and list(net.outputs) == ["y"]


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_yolov2_keys_and_post_processing_match_numpy(yolo_params):
    _use(yolo_params)
    model = YoloV2("voc", pretrained=False)
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randint(0, 256, (2, 3, 64, 96)))
    net = model(x, returns_net=True)
    conv = model(x, use_up_to="convdetect")
    last = model(x, use_up_to="lastconv")
    assert (conv.name, conv.shape) == ("Convolution_23_Output", (2, 125, 2, 3))
    assert (last.name, last.shape) == ("LeakyReLU_22_Output", (2, 1024, 2, 3))
    boxes = net.variables["Reshape_8_Output"]
    y = net.outputs["y"]
    assert y.shape == boxes.shape == (2, 5 * 2 * 3, 25)
    nn.forward_all([y, conv, boxes])
    t = conv.d.reshape(2, 5, 25, 2, 3)
    gx, gy = np.meshgrid(np.arange(3), np.arange(2))
    anchors = np.array([[1.3221, 1.73145], [3.19275, 4.00944], [5.05587, 8.09892],
                        [9.47112, 4.84053], [11.2364, 10.0071]])
    expected = np.empty_like(t)
    expected[:, :, 0] = (_sigmoid(t[:, :, 0]) + gx) / 3
    expected[:, :, 1] = (_sigmoid(t[:, :, 1]) + gy) / 2
    expected[:, :, 2] = np.exp(t[:, :, 2]) * anchors[:, 0, None, None] / 3
    expected[:, :, 3] = np.exp(t[:, :, 3]) * anchors[:, 1, None, None] / 2
    expected[:, :, 4] = _sigmoid(t[:, :, 4])
    e = np.exp(t[:, :, 5:] - t[:, :, 5:].max(axis=2, keepdims=True))
    expected[:, :, 5:] = e / e.sum(axis=2, keepdims=True)
    expected = expected.transpose(0, 1, 3, 4, 2).reshape(2, 30, 25)
    np.testing.assert_allclose(boxes.d, expected, rtol=1e-4, atol=1e-6)
    # the non-maximum suppression keeps the boxes and zeroes scores only
    np.testing.assert_allclose(y.d[..., :4], expected[..., :4], rtol=1e-4, atol=1e-6)
    assert np.all((y.d[..., 4:] == 0) | np.isclose(y.d[..., 4:], expected[..., 4:],
                                                     rtol=1e-4, atol=1e-6))
    assert (y.d[..., 4] == 0).any() and (y.d[..., 4] != 0).any()


def test_yolov2_pretrained_file_path_matches_the_architecture(tmp_path, yolo_params):
    """A file named as the published one, made for 416 x 416, used at 64 x 96."""
    _use(yolo_params)
    x416 = nn.Variable((1, 3, 416, 416))
    y = YoloV2("voc", pretrained=False)(x416)
    params = nn.get_parameters(grad_only=False)
    proto, members = _saved_network(x416, y, {"biases": params["biases"]})
    _install(tmp_path, "object_detection", "yolov2-voc.nnp", _old_style(proto, members))
    model = YoloV2("voc")
    assert model.pretrained and model.get_nnp_input_size() == (416, 416)
    # give the loaded network the values of the architecture's parameters
    from nnabla import parameter as P
    with P.parameter_scope("", model.nnp._params):
        for name, v in params.items():
            P.set_parameter(name, nn.Variable.from_numpy_array(v.d.copy()))
    x = nn.Variable.from_numpy_array(np.random.RandomState(1).randint(0, 256, (2, 3, 64, 96)))
    nn.clear_parameters()
    keys = {"detection": ("y", (2, 30, 25)), "convdetect": ("Convolution_23_Output",
                                                            (2, 125, 2, 3)),
            "lastconv": ("LeakyReLU_22_Output", (2, 1024, 2, 3))}
    from_file = {}
    for key, (name, shape) in keys.items():
        net = model(x, use_up_to=key, returns_net=True)
        assert list(net.inputs) == ["x"] and list(net.outputs) == [name], key
        v = net.outputs[name]
        assert v.shape == shape, key
        v.forward()
        from_file[key] = v.d.copy()
    # the file's anchors (grid of 13) were rescaled to this grid (2 x 3), not compounded
    with P.parameter_scope("", model.nnp._params):
        biases = P.get_parameter("biases").d.reshape(5, 2)
    np.testing.assert_allclose(biases, YoloV2("voc", pretrained=False).anchors / [3, 2],
                               rtol=1e-6)
    model(x)
    with P.parameter_scope("", model.nnp._params):
        np.testing.assert_allclose(P.get_parameter("biases").d.reshape(5, 2), biases)
    nn.clear_parameters()
    for name, v in params.items():
        P.set_parameter(name, v)
    arch = YoloV2("voc", pretrained=False)
    for key in keys:
        y = arch(x, use_up_to=key)
        y.forward()
        np.testing.assert_allclose(y.d, from_file[key], rtol=1e-5, atol=1e-5, err_msg=key)
    # training: batch statistics and trainable parameters
    net = model(x, training=True, returns_net=True)
    assert net.variables["c1/conv/W"].need_grad
    assert not model(x, returns_net=True).variables["c1/conv/W"].need_grad


def test_yolov2_arguments_are_checked():
    with pytest.raises(ValueError, match=r'dataset must be chosen from \["voc", "coco"\]'):
        YoloV2("kitti", pretrained=False)
    model = YoloV2(pretrained=False)
    assert model.input_shape == (3, 416, 416)
    with pytest.raises(ValueError, match="Available keys are"):
        model(use_up_to="classifier")
    with pytest.raises(ValueError, match="multiples of 32"):
        model(nn.Variable((1, 3, 100, 96)))
    with pytest.raises(ValueError, match="must be 3"):
        model(nn.Variable((1, 1, 64, 64)))
    with pytest.raises(ValueError, match="use_from"):
        model(use_from="x")
    assert len(model.get_category_names()) == 20
    assert model.get_category_names()[14] == "person"
    assert len(YoloV2("coco", pretrained=False).get_category_names()) == 80


def test_offline_download_names_the_url_and_the_destination(monkeypatch, tmp_path):
    monkeypatch.setenv("NNABLA_MODELS_URL_BASE", "http://127.0.0.1:9/models/")
    for make, url, path in (
            (lambda: YoloV2("coco"), "object_detection/yolov2-coco.nnp",
             "object_detection/yolov2-coco.nnp"),
            (lambda: DeepLabV3plus("voc-coco", 8),
             "semantic_segmentation/DeepLabV3-voc-coco-os-8.nnp",
             "semantic_segmentation/DeepLabV3-voc-coco-os-8.nnp")):
        with pytest.raises(DownloadError) as error:
            make()
        assert "http://127.0.0.1:9/models/" + url in str(error.value)
        assert str(tmp_path / "nnabla_data" / "nnp_models" / path) in str(error.value)
        assert not (tmp_path / "nnabla_data" / "nnp_models" / path).exists()


def test_environment_variable_switches_off_pretrained(monkeypatch):
    monkeypatch.setenv("NNABLA_MODELS_PRETRAINED", "0")
    monkeypatch.setenv("NNABLA_MODELS_URL_BASE", "http://127.0.0.1:9/models/")
    assert YoloV2().nnp is None and DeepLabV3plus().nnp is None


# -- DeepLabV3plus -------------------------------------------------------------------------------
@pytest.mark.parametrize("output_stride", [16, 8])
def test_deeplab_architecture_is_nnabla_examples_network(recorded, deeplab_params,
                                                         output_stride):
    _use(deeplab_params)
    entry = recorded[f"DeepLabV3-voc-os-{output_stride}"]
    x = nn.Variable((1, 3, 513, 513))
    model = DeepLabV3plus("voc", output_stride, pretrained=False)
    y = model(x)
    proto, _ = _saved_network(x, y)
    ours = [[f.name, f.type, list(f.input), list(f.output)] for f in proto.network[0].function]
    assert _structure(ours) == _structure(entry["functions"])
    # the dilations of the pyramid pooling
    rates = [f.depthwise_convolution_param.dilation.dim[0] for f in proto.network[0].function
             if f.type == "DepthwiseConvolution"]
    assert rates[-5:-2] == ([6, 12, 18] if output_stride == 16 else [12, 24, 36])
    params = {k: list(v.shape) for k, v in nn.get_parameters(grad_only=False).items()}
    assert params == entry["parameters"]
    seg = [c for c in entry["calls"] if c["key"] == "segmentation"]
    assert [list(y.shape)] == [c["shape"] for c in seg if not c["training"]]
    model(x, training=True)
    trainable = sum(v.need_grad for v in nn.get_parameters(grad_only=False).values())
    assert [trainable] == [c["n_need_grad"] for c in seg if c["training"]]


def test_deeplab_keys_forward_and_file_path(tmp_path, deeplab_params):
    _use(deeplab_params)
    x513 = nn.Variable((1, 3, 513, 513))
    model = DeepLabV3plus("voc", pretrained=False)
    y = model(x513)
    proto, members = _saved_network(x513, y)
    x = nn.Variable.from_numpy_array(np.random.RandomState(2).uniform(-1, 1, (1, 3, 33, 49)))
    keys = {"segmentation": ("y", (1, 21, 33, 49)),
            "lastconv": ("BatchNormalization_146_Output", (1, 256, 9, 13)),
            "lastconv+relu": ("ReLU_82_Output", (1, 256, 9, 13))}
    outputs = {}
    for key, (name, shape) in keys.items():
        v = model(x, use_up_to=key)
        assert (v.name, v.shape) == (name, shape), key
        outputs[key] = v
    nn.forward_all(list(outputs.values()))
    np.testing.assert_allclose(outputs["lastconv+relu"].d,
                               np.maximum(outputs["lastconv"].d, 0), rtol=1e-6)
    assert np.all(np.isfinite(outputs["segmentation"].d))
    # a file named as the published one (made for 513 x 513) used at 33 x 49
    _install(tmp_path, "semantic_segmentation", "DeepLabV3-voc-os-16.nnp",
             _old_style(proto, members))
    nn.clear_parameters()
    loaded = DeepLabV3plus("voc")
    with nn.parameter_scope("", loaded.nnp._params):
        _use(deeplab_params)
    for key, (name, shape) in keys.items():
        net = loaded(x, use_up_to=key, returns_net=True)
        assert list(net.outputs) == [name] and net.outputs[name].shape == shape, key
        assert list(net.inputs) == ["x"]


def test_deeplab_arguments_are_checked():
    with pytest.raises(ValueError, match="voc-coco"):
        DeepLabV3plus("coco", pretrained=False)
    with pytest.raises(ValueError, match=r"output_stride must be chosen from \[16, 8\]"):
        DeepLabV3plus("voc", 32, pretrained=False)
    model = DeepLabV3plus(pretrained=False)
    assert model.input_shape == (3, 513, 513)
    with pytest.raises(ValueError, match="Available keys are"):
        model(use_up_to="detection")
    assert model.category_names[0] == "aeroplane" and len(model.category_names) == 20


# -- utilities -----------------------------------------------------------------------------------
def test_letterbox_and_inverse_transform():
    image = np.random.RandomState(3).randint(0, 256, (100, 200, 3)).astype(np.uint8)
    box = od_utils.LetterBoxTransform(image, 64, 64)
    assert box.image.shape == (64, 64, 3) and (box.new_w, box.new_h) == (64, 32)
    assert np.all(box.image[:16] == 127) and np.all(box.image[48:] == 127)
    # the letterbox's center maps to the image's center; its full width to the image's
    coords = np.array([[0.5, 0.5, 1.0, 0.5, 0.9]])
    np.testing.assert_allclose(box.inverse_coordinate_transform(coords),
                               [[100, 50, 200, 100, 0.9]])
    with pytest.raises(ValueError, match="uint8"):
        od_utils.letterbox(image.astype(np.float32), 64, 64)


def test_draw_bounding_boxes_colors_the_box_edges(capsys):
    image = np.zeros((50, 60, 3), np.uint8)
    boxes = np.array([[30, 25, 20, 10, 0.9, 0.1, 0.8], [10, 10, 4, 4, 0.9, 0.1, 0.2]])
    out = od_utils.draw_bounding_boxes(image, boxes, ["cat", "dog"],
                                       colors=[(255, 0, 0), (0, 255, 0)])
    assert out.shape == image.shape and not image.any()
    assert tuple(out[20, 25]) == (0, 255, 0)     # top-left corner of the dog's box
    assert not out[10, 10].any()                 # below threshold: not drawn
    assert "dog: 80.00%" in capsys.readouterr().out


def test_segmentation_pre_and_post_processing(tmp_path):
    image = np.random.RandomState(4).randint(0, 256, (40, 80, 3)).astype(np.uint8)
    proc = ss_utils.ProcessImage(image, 64, 64)
    x = proc.pre_process()
    assert x.shape == (1, 3, 64, 64) and x.dtype == np.float32
    assert np.all(x[:, :, 32:] == 0)         # padded with the mean, 127.5 -> 0
    assert -1 <= x.min() and x.max() <= 1
    labels = np.zeros((64, 64), np.int64)
    labels[:32, 32:] = 15
    post = proc.post_process(labels)
    assert post.shape == (40, 80)
    assert set(np.unique(post)) == {0, 15} and post[0, 79] == 15 and post[0, 0] == 0
    path = str(tmp_path / "seg.png")
    proc.save_segmentation_image(path)
    from nnabla.utils.image_utils import imread
    saved = imread(path)
    # label 15 is (192, 128, 128), scaled by the brightest color used
    assert saved.shape == (40, 80, 3) and tuple(saved[0, 0]) == (0, 0, 0)
    np.testing.assert_allclose(saved[0, 79], [255, 170, 170], atol=1)
    assert ss_utils.get_color().shape == (23, 3)
