"""Record the networks nnabla 1.39's ``nn.graph_def`` writes for a few recorded models.

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_graph_def.py tests/data/converter/graph_def

For each model of ``tests/graph_def/models.py`` it writes ``<model>.nntxt``: the
``NNablaProtoBuf`` text of ``g.as_proto()`` (networks only, variable batch size on), which
``tests/graph_def/test_graph_def_reference.py`` compares with ours.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "graph_def"))


def main(folder):
    import nnabla as nn
    from google.protobuf import text_format

    import models

    os.makedirs(folder, exist_ok=True)
    for name, build in models.MODELS.items():
        nn.clear_parameters()
        nn.graph_def.reset_default_graph()
        g = build()
        text = text_format.MessageToString(g.as_proto())
        path = os.path.join(folder, f"{name}.nntxt")
        with open(path + ".tmp", "w") as stream:
            stream.write(text)
        os.replace(path + ".tmp", path)
        print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data",
                                                             "converter", "graph_def"))
