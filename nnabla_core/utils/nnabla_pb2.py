"""``nnabla.utils.nnabla_pb2``: protobuf message classes of nnabla's NNP format.

The schema is ``nnabla.proto`` beside this module (wire-compatible with nnabla's:
same message names, field names and numbers). protoc compiled it into the
serialized descriptor in :mod:`nnabla.utils._nnabla_descriptor`; this module
builds the classes from that descriptor with protobuf's own builder, exactly as
protoc's generated ``_pb2`` modules do, but without pinning the protobuf runtime
to the version of the protoc that made it (generated modules refuse any older
runtime). Regenerate both files with ``tools/gen_nnabla_proto.py``.

Example:
    >>> from nnabla.utils import nnabla_pb2
    >>> nnp = nnabla_pb2.NNablaProtoBuf()
    >>> net = nnp.network.add()
    >>> net.name = "net"
    >>> nnabla_pb2.NNablaProtoBuf.FromString(nnp.SerializeToString()).network[0].name
    'net'
"""
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf.internal import builder as _builder

from ._nnabla_descriptor import SERIALIZED as _SERIALIZED

DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(_SERIALIZED)
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, __name__, globals())
