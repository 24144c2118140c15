"""Draw a computation graph with Graphviz (``nnabla.experimental.viewers``).

Needs the ``graphviz`` Python package (``pip install graphviz``). Rendering to an image
also needs Graphviz's ``dot`` program; without it :meth:`SimpleGraph.save` and
:meth:`SimpleGraph.view` write the DOT source and warn.
"""
from __future__ import annotations

import json
import os
import warnings
from collections import defaultdict

import numpy as np

_INSTALL_HINT = "Install graphviz. `pip install graphviz.`"


def _function_color(fname, fname_color_map):
    if fname_color_map is not None:
        return fname_color_map.get(fname, "lightgray")
    for part, color in (("Conv", "blue"), ("Affine", "red"), ("Norm", "orange"),
                        ("ReLU", "green"), ("Pool", "lightblue2")):
        if part in fname:
            return color
    if np.sum([x in fname for x in ["Add", "Sub", "Mul", "Div"]]):
        return "purple"
    return "gray"


class _GraphDrawer:
    """``Variable.visit`` callback adding each function and its variables to a Digraph."""

    def __init__(self, graph, verbose=False, fname_color_map=None, vname_color_map=None,
                 fun2scope=None, var2name=None):
        self._fname_to_idx = defaultdict(int)
        self._vhash_to_idx = defaultdict(int)
        self._graph = graph
        self._verbose = verbose
        self._fname_color_map = fname_color_map
        self._vname_color_map = vname_color_map
        self._fun2scope = fun2scope
        self._var2name = var2name or {}

    def _variable_color(self, v):
        if v.data in self._var2name:
            return "pink"
        if self._vname_color_map is not None and v.name in self._vname_color_map:
            return self._vname_color_map[v.name]
        return "lightgray"

    def _variable_label(self, v):
        if v.data in self._var2name:
            return self._var2name[v.data]
        name = v.name if v.name != "" else "h"
        if not self._verbose:
            return name
        return f"{name}\n(({v.shape}, need_grad={v.need_grad}))"

    def _function_label(self, f):
        if self._fun2scope is not None and f in self._fun2scope:
            return f.name + "\n" + self._fun2scope[f]
        if not self._verbose:
            return f.name
        return f"{f.name}\n({json.dumps(f.info.args)})"

    def _add_variable(self, node_name, v):
        fillcolor = self._variable_color(v)
        self._graph.node(node_name, label=self._variable_label(v),
                         shape="" if self._verbose else "circle",
                         color="black" if v.need_grad else fillcolor, fillcolor=fillcolor)

    def __call__(self, f):
        self._fname_to_idx[f.name] += 1
        fname = f"{f.name}-{self._fname_to_idx[f.name]}"
        for i in f.inputs:
            key = str(hash(i))
            tail = f"{key}-{self._vhash_to_idx[key]}"
            self._graph.edge(tail, fname)
            self._add_variable(tail, i)
        for o in f.outputs:
            key = str(hash(o))
            self._vhash_to_idx[key] += 1
            head = f"{key}-{self._vhash_to_idx[key]}"
            self._graph.edge(fname, head)
            self._add_variable(head, o)
        self._graph.node(fname, label=self._function_label(f),
                         shape="box" if self._verbose else "square",
                         # the documented key is the function name (nnabla 1.39 looks up
                         # "Name-index", so a map never matches there)
                         color=_function_color(f.name, self._fname_color_map),
                         fontcolor="white")


class SimpleGraph:
    """Graphviz drawing of the graph that ends at a variable.

    Functions are squares coloured by type, variables circles (parameters in pink and
    labelled with their names, relative to the function's parameter scope).

    Args:
        format (str): Image format of :meth:`save` and :meth:`view` (``'png'``, ``'pdf'``...).
        verbose (bool): Also show variable shapes and function arguments.
        fname_color_map (dict or None): Function name -> Graphviz colour (others
            ``lightgray``); None colours by type.
        vname_color_map (dict or None): Variable name -> Graphviz colour.

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> with nn.parameter_scope("fc"):
        ...     y = PF.affine(nn.Variable((2, 3)), 4)
        >>> dot = SimpleGraph().create_graphviz_digraph(y)
        >>> "Affine" in dot.source and "fc/affine" in dot.source
        True
    """

    def __init__(self, format="png", verbose=False, fname_color_map=None,
                 vname_color_map=None):
        self._format = format
        self._verbose = verbose
        self._fname_color_map = fname_color_map
        self._vname_color_map = vname_color_map

    def functor(self, graph, verbose=False, fun2scope=None, var2name=None):
        """The ``visit`` callback that draws into ``graph``."""
        return _GraphDrawer(graph, verbose, self._fname_color_map, self._vname_color_map,
                            fun2scope=fun2scope, var2name=var2name)

    def save(self, vleaf, fpath, cleanup=False, format=None):
        """Render the graph to ``fpath`` + ``.`` + format (the DOT source goes to ``fpath``).

        Without Graphviz's ``dot`` program only the DOT source is written, with a warning.

        Args:
            vleaf (nnabla.Variable): Last variable of the graph.
            fpath (str): Output path without the format's extension.
            cleanup (bool): Delete the DOT source after rendering.
            format (str or None): Overrides the image format.

        Returns:
            str: Path of the rendered image, or of the DOT source without ``dot``.
        """
        graph = self.create_graphviz_digraph(vleaf, format=format)
        return _render(graph, fpath, cleanup=cleanup)

    def view(self, vleaf, fpath=None, cleanup=True, format=None, params=None):
        """Render the graph and open it in the system's viewer.

        Args:
            vleaf (nnabla.Variable): Last variable of the graph.
            fpath (str or None): Output path (a temporary name when None).
            cleanup (bool): Delete the DOT source after rendering.
            format (str or None): Overrides the image format.
            params (dict or None): Parameters to name (default: ``nn.get_parameters``).
        """
        graph = self.create_graphviz_digraph(vleaf, params, format=format)
        return _render(graph, fpath, cleanup=cleanup, view=True)

    def create_graphviz_digraph(self, vleaf, params=None, format=None):
        """Return a ``graphviz.Digraph`` of the graph ending at ``vleaf``.

        Args:
            vleaf (nnabla.Variable): Last variable of the graph.
            params (dict or None): name -> Variable of the parameters to label (default:
                ``nn.get_parameters(grad_only=False)``).
            format (str or None): Overrides the image format.

        Raises:
            ImportError: The graphviz package is not installed.
        """
        from nnabla import get_parameters
        try:
            from graphviz import Digraph
        except ImportError as error:
            raise ImportError(_INSTALL_HINT) from error
        graph = Digraph(format=format or self._format)
        graph.attr("node", style="filled")
        if params is None:
            params = get_parameters(grad_only=False)
        var2name = {v.data: k for k, v in params.items()}
        fun2scope, var2postname = _parameter_scopes(vleaf, params, var2name)
        vleaf.visit(self.functor(graph, self._verbose, fun2scope=fun2scope,
                                 var2name=var2postname))
        return graph


def _parameter_scopes(vleaf, params, var2name):
    fun2scope = {}
    var2postname = dict(var2name)

    def scope_of(f):
        names = [var2name[v.data] for v in f.inputs if v.data in var2name]
        if names:
            common = os.path.commonprefix([os.path.dirname(names[0]), *names[1:]])
            fun2scope[f] = common
            for name in names:
                var2postname[params[name].data] = name[len(common) + 1:]
    vleaf.visit(scope_of)
    return fun2scope, var2postname


def _render(graph, fpath, cleanup=False, view=False):
    from graphviz import ExecutableNotFound
    try:
        return graph.render(fpath, cleanup=cleanup, view=view)
    except ExecutableNotFound:
        source_path = graph.save(fpath)
        warnings.warn(f"SimpleGraph: Graphviz's 'dot' program was not found, so no "
                      f"{graph.format} was rendered; the DOT source is in {source_path} "
                      "(install Graphviz, e.g. apt-get install graphviz, to render it)",
                      RuntimeWarning, stacklevel=3)
        return source_path
