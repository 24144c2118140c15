"""Record how nnabla 1.39's YoloV2 and DeepLabV3plus model classes build their networks.

nnabla's published files (``yolov2-voc.nnp``, ``DeepLabV3-voc-os-16.nnp`` ...) were written
by the scripts of nnabla-examples (``object-detection/yolov2``,
``semantic-segmentation/deeplabv3plus``). This tool rebuilds those networks with the
examples' own model code on nnabla 1.39, saves them as ``.nnp`` files (random parameters)
into a temporary nnabla data home, runs nnabla's model classes on them, and records:

* the file's network: its functions (name, type, inputs, outputs) and parameters
  (name, shape);
* for each ``use_up_to`` key (at the files' input size, batch 1): the name and shape of
  the returned variable, the names of the network's inputs and outputs, and the number of
  trainable parameters.

nnabla 1.39 names functions ``Convolution``, ``Convolution_1`` ... while the published
files (written by an older nnabla) have ``Convolution``, ``Convolution_2`` ... and
``<function>_Output`` variables, which the model classes' keys and input-size callbacks
name. On these files the classes therefore return the full network for every key (as
recorded), and other input or batch sizes fail in nnabla 1.39's callbacks; the tests use
the function lists, the parameters and the default key's results.

Run with an interpreter that has nnabla 1.39 (never this project's package), giving a
checkout of nnabla-examples:

    $NNABLA_REFERENCE_PYTHON tools/record_detection_models.py EXAMPLES_DIR \\
        tests/data/models/detection_models_1.39.json
"""
import json
import os
import sys
import tempfile

ANCHORS = {
    "voc": [1.3221, 1.73145, 3.19275, 4.00944, 5.05587, 8.09892, 9.47112, 4.84053,
            11.2364, 10.0071],
    "coco": [0.57273, 0.677385, 1.87446, 2.06253, 3.33843, 5.47434, 7.88282, 3.52778,
             9.77052, 9.16828],
}
CLASSES = {"voc": 20, "coco": 80}


def _save(path, x, y):
    from nnabla.utils.save import save

    contents = {"networks": [{"name": "runtime", "batch_size": 1, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "runtime", "network": "runtime", "data": ["x"],
                               "output": ["y"]}]}
    save(path, contents)   # the published files have a variable batch size


def _write_yolov2(examples, dataset, path):
    import numpy as np

    import nnabla as nn
    import nnabla.functions as F

    sys.path.insert(0, os.path.join(examples, "object-detection", "yolov2"))
    import yolov2

    nn.clear_parameters()
    anchors = np.array(ANCHORS[dataset]).reshape(-1, 2)
    x = nn.Variable((1, 3, 416, 416))
    y = yolov2.yolov2(x / 255.0, len(anchors), CLASSES[dataset], test=True)
    y = yolov2.yolov2_activate(y, len(anchors), anchors)
    y = F.nms_detection2d(y, 0.5, 0.45, True)
    _save(path, x, y)
    nn.clear_parameters()


def _write_deeplab(examples, output_stride, path):
    import nnabla as nn

    sys.path.insert(0, os.path.join(examples, "semantic-segmentation", "deeplabv3plus"))
    import model

    nn.clear_parameters()
    x = nn.Variable((1, 3, 513, 513))
    y = model.deeplabv3plus_model(x, output_stride, 21, test=True)
    _save(path, x, y)
    nn.clear_parameters()


def _describe(path):
    """The functions and parameter shapes of the file's network."""
    import zipfile

    from google.protobuf import text_format
    from nnabla.utils import nnabla_pb2

    proto = nnabla_pb2.NNablaProtoBuf()
    with zipfile.ZipFile(path) as z:
        text_format.Merge(z.read("network.nntxt").decode(), proto)
    net = proto.network[0]
    return {"network": net.name,
            "functions": [[f.name, f.type, list(f.input), list(f.output)]
                          for f in net.function],
            "parameters": {v.name: list(v.shape.dim) for v in net.variable
                           if v.type == "Parameter"}}


def _run_model(make_model, keys, sizes, batches):
    import numpy as np

    import nnabla as nn

    out = []
    model = make_model()
    for key in keys:
        for size in sizes:
            for batch in batches:
                for training in (False, True):
                    nn.clear_parameters()
                    x = nn.Variable.from_numpy_array(
                        np.random.RandomState(0).randint(0, 256, (batch, 3) + size))
                    net = model(x, use_up_to=key, training=training, returns_net=True)
                    y = list(net.outputs.values())[0]
                    y.forward()
                    grads = sorted(k for k, v in nn.get_parameters(grad_only=False).items()
                                   if v.need_grad)
                    out.append({"key": key, "size": list(size), "batch": batch,
                                "training": training, "name": y.name,
                                "shape": list(y.shape), "inputs": list(net.inputs),
                                "outputs": list(net.outputs),
                                "n_need_grad": len(grads)})
                    print(out[-1], flush=True)
    return out


def main(examples, output):
    home = tempfile.mkdtemp()
    os.environ["HOME"] = home
    result = {}
    od = os.path.join(home, "nnabla_data", "nnp_models", "object_detection")
    ss = os.path.join(home, "nnabla_data", "nnp_models", "semantic_segmentation")
    os.makedirs(od)
    os.makedirs(ss)
    from nnabla.models.object_detection import YoloV2
    from nnabla.models.semantic_segmentation import DeepLabV3plus

    for dataset in ("voc", "coco"):
        path = os.path.join(od, f"yolov2-{dataset}.nnp")
        _write_yolov2(examples, dataset, path)
        entry = _describe(path)
        entry["calls"] = _run_model(
            lambda: YoloV2(dataset), ["detection", "convdetect", "lastconv"],
            [(416, 416)], [1])
        result[f"yolov2-{dataset}"] = entry
    for os_ in (16, 8):
        path = os.path.join(ss, f"DeepLabV3-voc-os-{os_}.nnp")
        _write_deeplab(examples, os_, path)
        entry = _describe(path)
        sizes = [(513, 513)]
        entry["calls"] = _run_model(
            lambda: DeepLabV3plus("voc", os_), ["segmentation", "lastconv", "lastconv+relu"],
            sizes, [1])
        result[f"DeepLabV3-voc-os-{os_}"] = entry
    tmp = output + ".tmp"
    with open(tmp, "w") as fd:
        json.dump(result, fd, separators=(",", ":"))
    os.replace(tmp, output)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
