"""``nnabla.utils.nnabla_pb2``: protobuf message classes of nnabla's NNP format.

The schema is built at import time from the function spec by
:mod:`nnabla.utils._nnp_schema` (wire-compatible with nnabla's ``nnabla.proto``: same
message names, field names and numbers); ``nnabla.proto`` beside this module is that schema
printed for reading (``tools/gen_nnabla_proto.py``). The classes are made with protobuf's
own builder, exactly as protoc's generated ``_pb2`` modules do, but without pinning the
protobuf runtime to the version of a protoc (generated modules refuse any older runtime).

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

from ._nnp_schema import file_descriptor as _file_descriptor

DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(
    _file_descriptor().SerializeToString())
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, __name__, globals())
