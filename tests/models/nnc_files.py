"""Files shaped like nnabla's published ImageNet models, for testing the ``.nnp`` path
offline: the network a ``pretrained=False`` model builds for training, saved as Neural
Network Console names things (each function named after its output variable, the input
variable and the network named as in the published file)."""
import io
import json
import os
import zipfile

import nnabla as nn
from google.protobuf import text_format
from nnabla.utils import nnabla_pb2
from nnabla.utils.save import save

# classes checked through an NNC-style file: one per way of adapting the file (prefixed
# names, auxiliary towers and the 'Train' network, other input names, the input dropped
# rather than rewired, the common case), small enough to write quickly
CLASSES = ["SqueezeNetV11", "GoogLeNet", "InceptionV3", "MobileNetV2", "ShuffleNet05"]


def queries(model):
    """The calls compared with nnabla 1.39: every key in inference and training, and the
    auxiliary towers where the class has them."""
    keys = [k for k in model._KEY_VARIABLE if not k.startswith("_")]
    calls = [dict(use_up_to=k, training=t) for t in (False, True) for k in keys]
    if hasattr(model, "_AUX_KEYS"):
        calls.append(dict(training=True, with_aux_tower=True))
    return calls


def describe(result):
    """JSON-able summary of a model call: output names and shapes, trainable or not."""
    outputs = result if isinstance(result, list) else [result]
    trainable = []
    outputs[-1].visit(lambda f: trainable.extend(v.need_grad for v in f.inputs))
    return {"outputs": [[y.name, list(y.shape)] for y in outputs],
            "trainable": any(trainable)}


def write_nnc_style_nnp(model_class, path):
    """Save ``model_class(pretrained=False)``'s training network (with its auxiliary
    towers) to ``path`` in the published files' naming."""
    nn.clear_parameters()
    model = model_class(pretrained=False)
    x = nn.Variable((1,) + model.input_shape)
    kwargs = {"with_aux_tower": True} if hasattr(model, "_AUX_KEYS") else {}
    net = model(x, training=True, returns_net=True, **kwargs)
    parameters = set(nn.get_parameters(grad_only=False))
    names = {k: v for k, v in net.variables.items() if k not in parameters}
    names[model._nnp_input] = x
    buffer = io.BytesIO()
    save(buffer, {"networks": [{"name": model._nnp_network, "batch_size": 1,
                                "outputs": dict(net.outputs), "names": names}]},
         extension=".nnp")
    nn.clear_parameters()
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path + ".part", "w") as target:
        for item in source.namelist():
            data = source.read(item)
            if item.endswith(".nntxt"):
                proto = text_format.Parse(data.decode(), nnabla_pb2.NNablaProtoBuf())
                for function in proto.network[0].function:
                    function.name = function.output[0]
                data = text_format.MessageToString(proto).encode()
            target.writestr(item, data)
    os.replace(path + ".part", path)


def load_recorded(path):
    with open(path) as f:
        return json.load(f)
