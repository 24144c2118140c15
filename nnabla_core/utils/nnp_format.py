"""The NNP exchange format's version (``nnabla.utils.nnp_format``).

An ``.nnp`` file is a zip archive. Its members:

* ``nnp_version.txt``: the format version, :func:`nnp_version`, followed by a newline.
* ``*.nntxt`` (or ``*.prototxt``): an ``NNablaProtoBuf`` (networks, executors, optimizers,
  monitors, datasets, configurations) in protobuf's text format.
* ``*.protobuf``: an ``NNablaProtoBuf`` in protobuf's binary format (parameters, or the
  whole content).
* ``*.h5``: parameters in HDF5 (one dataset per parameter).
* ``*.optimizer``: solver states of an optimizer.

Members with other extensions are ignored when loading.
"""


def nnp_version():
    """The version of the NNP format this package writes.

    Returns:
        str: ``'0.1'`` (the only version so far; nnabla 1.39 writes the same).

    Example:
        >>> from nnabla.utils.nnp_format import nnp_version
        >>> nnp_version()
        '0.1'
    """
    return "0.1"
