"""Writing the converter's ``nnp`` object as ``.nnp``, ``.nntxt`` or ``.protobuf``.

``.nnp`` archives hold ``nnp_version.txt``, ``network.nntxt`` and the parameters as
``parameter.protobuf`` (default), ``parameter.h5``, inside the text (``included``) or not at
all (``none``), as nnabla's converter writes them.
"""
from __future__ import annotations

import os

import numpy as np

from ... import _nnp_archive, nnabla_pb2

PARAMETER_TYPES = ("protobuf", "h5", "included", "none")


def _h5_bytes(proto):
    import io

    import h5py

    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as h5:
        for i, param in enumerate(proto.parameter):
            data = np.reshape(np.array(param.data, dtype=np.float32), tuple(param.shape.dim))
            dataset = h5.create_dataset(param.variable_name, dtype="f4", data=data)
            dataset.attrs["need_grad"] = param.need_grad
            dataset.attrs["index"] = i
    return buffer.getvalue()


class NnpExporter:
    """Writes an ``nnp`` object (see :class:`~.importer.NnpImporter`).

    Args:
        nnp: the object to write.
        batch_size (int): kept for nnabla's signature; an NNP keeps the network's own.
        parameter_type (str): one of :data:`PARAMETER_TYPES`.
    """

    def __init__(self, nnp, batch_size, parameter_type="protobuf", force=False):
        if parameter_type not in PARAMETER_TYPES:
            raise ValueError(f"NnpExporter: parameter_type {parameter_type!r}; expected one of "
                             f"{PARAMETER_TYPES}")
        self._nnp = nnp.protobuf
        self._other_files = nnp.other_files
        self._parameter_type = parameter_type
        self._batch_size = batch_size

    def _members(self):
        text_part = nnabla_pb2.NNablaProtoBuf()
        text_part.CopyFrom(self._nnp)
        if self._parameter_type != "included":
            text_part.ClearField("parameter")
        members = [("nnp_version.txt", "0.1\n"),
                   ("network.nntxt", _nnp_archive.to_text(text_part))]
        if self._parameter_type == "protobuf":
            params = nnabla_pb2.NNablaProtoBuf()
            params.parameter.extend(self._nnp.parameter)
            members.append(("parameter.protobuf", params.SerializeToString()))
        elif self._parameter_type == "h5":
            members.append(("parameter.h5", _h5_bytes(self._nnp)))
        return members

    def execute(self, output):
        """Write to ``output`` (``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf``, or an
        existing folder that receives the archive's members), atomically."""
        if os.path.isdir(output):
            for name, content in self._members():
                _nnp_archive.write_target(os.path.join(output, name), content,
                                          binary=isinstance(content, bytes))
            return True
        ext = os.path.splitext(output)[1].lower()
        if ext == ".nnp":
            _nnp_archive.write_archive(output, self._members())
        elif ext in (".nntxt", ".prototxt"):
            _nnp_archive.write_target(output, _nnp_archive.to_text(self._nnp), binary=False)
        elif ext == ".protobuf":
            _nnp_archive.write_target(output, self._nnp.SerializeToString(), binary=True)
        else:
            raise ValueError(f"NnpExporter: output {output!r} has extension {ext!r}; "
                             f"expected .nnp, .nntxt, .prototxt or .protobuf")
        return True
