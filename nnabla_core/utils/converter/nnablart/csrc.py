"""NNP -> C sources for the nnabla C runtime (``nnabla_cli convert -O CSRC``), as nnabla 1.39.

:class:`CsrcExporter` writes the first executor's network into a folder as

- ``<net>_inference.h``/``<net>_inference.c``: a context holding every variable (``rt_variable_t``,
  shape and data pointer) and function (``rt_function_t`` with its inputs, outputs and a local
  context of its arguments), allocated by ``nnablart_<net>_allocate_context(params)``; the
  activation buffers are shared as the NNB exporter plans them
  (:func:`~nnabla.utils.converter.nnablart._buffers.plan_buffers`);
  ``nnablart_<net>_inference`` calls ``exec_<function>`` for each function in order;
- ``<net>_parameters.h``/``<net>_parameters.c`` (when there are parameters): the values as
  ``float`` arrays (affine weights transposed to the runtime's layout), and
  ``<net>_parameters``, the array to pass to ``allocate_context``;
- ``<net>_example.c``: a program reading each input from a raw float file and writing each
  output to ``<prefix>_<n>.bin``; ``GNUmakefile`` building it against
  ``libnnablart_functions``.

The text is nnabla 1.39's byte for byte (numbers are Python's ``str`` of the stored float32
as a double). Values of generator variables are drawn from numpy's global random state, as
nnabla does, so only files of networks without generators are reproducible.
"""
from __future__ import annotations

import os

from nnabla import _atomic
from .._function_table import get_function_info
from . import _nnb_tables, csrc_templates
from ._buffers import plan_buffers
from .nnb import _size, _transpose_affine_weights, network_info

# Functions whose weights the C runtime reads transposed (weight input positions).
_TRANSPOSED_WEIGHTS = {"Affine": [1], "BinaryConnectAffine": [1, 2],
                       "BinaryWeightAffine": [1, 2]}


def _write(path, text):
    _atomic.write_atomically(path, lambda stream: stream.write(text), "w",
                             encoding="utf-8", newline="\n")


def _shape_values(value):
    return list(value.dim)


def _list_values(value):
    return list(value)


_LISTS = {"Shape": _shape_values, "repeated int64": _list_values}


class CsrcExporter:
    """Writes the first executor's network of an ``nnp`` object as C sources.

    Args:
        nnp: from :class:`~nnabla.utils.converter.nnabla.NnpImporter` (changed in place:
            affine weights transposed).
        batch_size (int): replaces ``-1`` dimensions (negative: the network's batch size).

    Example:
        >>> from nnabla.utils.converter.nnabla import NnpImporter
        >>> from nnabla.utils.converter.nnablart import CsrcExporter
        >>> CsrcExporter(NnpImporter("model.nnp").execute(), 1).execute("model_c")
        ... # doctest: +SKIP
    """

    def __init__(self, nnp, batch_size):
        info = network_info(nnp.protobuf, batch_size)
        print(f"Using network [{info.executor.network_name}].")
        functions = get_function_info()
        for f in info.network.function:
            if f.type not in functions:
                raise ValueError(f"CSRC export: function {f.name!r} has type {f.type!r}, "
                                 f"which the C runtime's function table does not have")
        done = set()
        for f in info.network.function:
            if f.type in _TRANSPOSED_WEIGHTS:
                _transpose_affine_weights(info, _TRANSPOSED_WEIGHTS[f.type], f, done)
        for name in (p.variable_name for p in info.executor.parameter_variable):
            if name not in info.variables:
                raise ValueError(f"CSRC export: executor {info.executor.name!r} lists "
                                 f"parameter {name!r}, which network "
                                 f"{info.network.name!r} does not have")
        for v in info.network.variable:
            if v.type == "Parameter" and v.name not in info.parameters:
                raise ValueError(f"CSRC export: parameter {v.name!r} of network "
                                 f"{info.network.name!r} has no values in the file")
        self._info = info
        self._functions = functions

    # -- helpers ---------------------------------------------------------------------------

    def _parameter_variables(self):
        """(variable index, variable) of each Parameter of the network, in order."""
        return [(n, v) for n, v in enumerate(self._info.network.variable)
                if v.type == "Parameter"]

    def _arguments(self, f):
        """(name, type, value) of each argument of ``f`` in the function table's order."""
        spec = self._functions[f.type]
        arguments = spec.get("arguments") or {}
        if not arguments:
            return []
        param = getattr(f, f"{spec['snake_name']}_param")
        return [(name, arg["type"], getattr(param, name)) for name, arg in arguments.items()]

    # -- files -----------------------------------------------------------------------------

    def _parameters_files(self, folder, name):
        info = self._info
        header = f"extern void* {name}_parameters[{len(info.parameters)}];"
        _write(os.path.join(folder, f"{name}_parameters.h"),
               csrc_templates.csrc_parameters_defines.format(name_upper=name.upper(),
                                                             parameter_defines=header))
        lines = []
        for n, v in self._parameter_variables():
            lines += ["", f"// {v.name}", f"float {name}_parameter{n}[] = {{"]
            lines += [f"    {str(d):>20}," for d in info.parameters[v.name].data]
            lines.append("};")
        lines += ["", f"void* {name}_parameters[] ={{"]
        lines += [f"    (void*){name}_parameter{n}," for n, _ in self._parameter_variables()]
        lines.append("};")
        _write(os.path.join(folder, f"{name}_parameters.c"),
               csrc_templates.csrc_parameters_implements.format(
                   name=name, parameter_implements="\n".join(lines)))

    def _header_file(self, folder, name, prefix):
        info, upper = self._info, prefix.upper()
        inputs = [f"#define {upper}_INPUT{n}_SIZE "
                  f"({_size(info.variables[v].shape, info.batch_size)})"
                  for n, v in enumerate(info.input_variables)]
        outputs = [f"#define {upper}_OUTPUT{n}_SIZE "
                   f"({_size(info.variables[v].shape, info.batch_size)})"
                   for n, v in enumerate(info.output_variables)]
        params = []
        if info.parameters:
            params += ["/// Number of parameter buffers.",
                       f"#define {upper}_NUM_OF_PARAM_BUFFERS ({len(info.parameters)})",
                       "/// Parameter buffer sizes."]
            params += [f"#define {upper}_PARAM{n}_SIZE ({_size(p.shape, 1)})"
                       for n, p in enumerate(info.parameters.values())]
            params += ["/// Pointer of allocated buffer.",
                       f"float* {prefix}_param_buffer(void* context, int index);", ""]
        _write(os.path.join(folder, f"{name}_inference.h"), csrc_templates.csrc_defines.format(
            name_upper=name.upper(), prefix=prefix, prefix_upper=upper,
            num_of_input_buffers=len(info.input_variables),
            input_buffer_size_defines="\n".join(inputs),
            num_of_output_buffers=len(info.output_variables),
            output_buffer_size_defines="\n".join(outputs),
            num_of_param_buffers=len(info.parameters), param_buffer="\n".join(params)))

    def _context_struct(self, prefix, buffer_sizes):
        """The lines declaring the context type and the buffer size table."""
        info = self._info
        lines = ["typedef struct {",
                 f"    void *buffer_pool[{len(buffer_sizes)}];",
                 f"    void *param_pool[{len(info.parameters)}];",
                 f"    rt_buffer_allocate_type_t variable_buffers_allocate_type"
                 f"[{len(info.network.variable)}];",
                 "", "    // Variables"]
        for n, v in enumerate(info.network.variable):
            lines += [f"    rt_variable_t v{n}; ///< {v.name}",
                      f"    int v{n}_shape[{len(v.shape.dim)}];"]
        lines += ["", "    // Functions"]
        for n, f in enumerate(info.network.function):
            lines += [f"    rt_function_t f{n}; ///< {f.type}",
                      f"    rt_variable_t* f{n}_inputs[{len(f.input)}];",
                      f"    rt_variable_t* f{n}_outputs[{len(f.output)}];"]
            arguments = self._arguments(f)
            if arguments:
                snake = self._functions[f.type]["snake_name"]
                lines.append(f"    {snake}_local_context_t *f{n}_local_context;")
                for arg, kind, value in arguments:
                    if kind in _LISTS:
                        lines.append(f"    int f{n}_local_context_shape_{arg}"
                                     f"[{len(_LISTS[kind](value))}];")
        lines += [f"}} {prefix}_local_context_t;", "",
                  f"int actual_buf_sizes[{len(buffer_sizes)}] = {{"]
        lines += [f"    {s}," for s in buffer_sizes]
        lines += ["};", "",
                  "void *(*rt_variable_malloc_func)(size_t size) = malloc;",
                  "void (*rt_variable_free_func)(void *ptr) = free;", "",
                  "void *(*rt_malloc_func)(size_t size) = malloc;",
                  "void (*rt_free_func)(void *ptr) = free;", ""]
        return lines

    def _parameter_pool(self, buffer_count):
        """The lines of allocate_context that set up the buffers and the parameter pool."""
        lines = ["    // Variable buffer",
                 f"    for (int i = 0; i < {buffer_count}; i++) {{",
                 "        c->buffer_pool[i] = malloc(sizeof(float) * actual_buf_sizes[i]);",
                 "        memset(c->buffer_pool[i], 0, sizeof(float) * actual_buf_sizes[i]);",
                 "    }", "    if(params) {"]
        for p, (n, _) in enumerate(self._parameter_variables()):
            lines += [f"        c->variable_buffers_allocate_type[{n}] = "
                      f"RT_BUFFER_ALLOCATE_TYPE_ALLOCATED;",
                      f"        c->param_pool[{p}] = *params++;"]
        lines.append("    } else {")
        for p, (n, v) in enumerate(self._parameter_variables()):
            size = _size(v.shape, self._info.batch_size)
            lines += [f"        c->variable_buffers_allocate_type[{n}] = "
                      f"RT_BUFFER_ALLOCATE_TYPE_MALLOC;",
                      f"        c->param_pool[{p}] = *params++;",
                      f"        c->param_pool[{p}] = malloc(sizeof(float) * {size});"]
        lines.append("    }")
        return lines

    def _variables(self, buffers_of, generated):
        """The lines of allocate_context that set up each variable; ``generated`` receives
        the arrays of generator variables. Returns the lines and each variable's C name."""
        info = self._info
        lines, names = ["", "    // Variables"], {}
        parameter = 0
        for n, v in enumerate(info.network.variable):
            lines += [f"    // {v.name}",
                      f"    (c->v{n}).type = NN_DATA_TYPE_FLOAT;",
                      f"    (c->v{n}).shape.size = {len(v.shape.dim)};"]
            lines += [f"    c->v{n}_shape[{i}] = {d if d >= 0 else info.batch_size};"
                      for i, d in enumerate(v.shape.dim)]
            lines.append(f"    (c->v{n}).shape.data = c->v{n}_shape;")
            if v.name in info.generators:
                values = info.generators[v.name].flatten()
                generated.append(f"float {v.name}[{len(values)}] = {{")
                generated += [f"    {value}," for value in values]
                generated.append("};")
                data = v.name
            elif v.type == "Parameter":
                data = f"c->param_pool[{parameter}]"
                parameter += 1
            else:
                data = f"c->buffer_pool[{buffers_of.get(n, 0)}]"
            lines.append(f"    (c->v{n}).data = {data};")
            names[v.name] = f"(c->v{n})"
        return lines, names

    def _argument_lines(self, n, f):
        """The lines of allocate_context that fill function ``n``'s local context."""
        lines = []
        for arg, kind, value in self._arguments(f):
            target = f"(c->f{n}_local_context)->{arg}"
            if kind in _LISTS:
                items = _LISTS[kind](value)
                local = f"arg_f{n}_{arg}"
                lines += [f"    rt_list_t {local};", f"    {local}.size = {len(items)};",
                          f"    {local}.data = c->f{n}_local_context_shape_{arg};"]
                lines += [f"    {local}.data[{i}] = {item};" for i, item in enumerate(items)]
                lines.append(f"    {target} = {local};")
            elif kind == "bool":
                lines.append(f"    {target} = {int(bool(value))};")
            elif f"{f.type}.{arg}" in _nnb_tables.STRING_VALUES:
                snake = self._functions[f.type]["snake_name"]
                lines.append(f"    {target} = {snake.upper()}_{arg.upper()}_{value.upper()};")
            else:
                lines.append(f"    {target} = {value};")
        return lines

    def _functions_setup(self, names):
        lines = ["", "    // Functions"]
        for n, f in enumerate(self._info.network.function):
            snake = self._functions[f.type]["snake_name"]
            has_arguments = bool(self._arguments(f))
            lines.append(f"    // {f.type}")
            if has_arguments:
                lines.append(f"    c->f{n}_local_context = "
                             f"malloc(sizeof({snake}_local_context_t));")
            lines.append(f"    (c->f{n}).num_of_inputs = {len(f.input)};")
            lines += [f"    (c->f{n}_inputs)[{i}] = &{names[x]};" for i, x in enumerate(f.input)]
            lines += [f"    (c->f{n}).inputs = c->f{n}_inputs;",
                      f"    (c->f{n}).num_of_outputs = {len(f.output)};"]
            lines += [f"    (c->f{n}_outputs)[{i}] = &{names[x]};"
                      for i, x in enumerate(f.output)]
            lines.append(f"    (c->f{n}).outputs = c->f{n}_outputs;")
            if has_arguments:
                lines.append(f"    (c->f{n}).local_context = c->f{n}_local_context;")
                lines += self._argument_lines(n, f)
            else:
                lines.append(f"    (c->f{n}).local_context = 0;")
            lines.append(f"    allocate_{snake}_local_context(&(c->f{n}));")
        return lines

    def _free_lines(self, buffer_count):
        lines = ["", f"    for (int i = 0; i < {buffer_count}; i++) {{",
                 "        free(c->buffer_pool[i]);", "    }"]
        for p, (n, _) in enumerate(self._parameter_variables()):
            lines += [f"    if(c->variable_buffers_allocate_type[{n}] == "
                      f"RT_BUFFER_ALLOCATE_TYPE_MALLOC) {{",
                      f"        free(c->param_pool[{p}]);", "    }"]
        for n, f in enumerate(self._info.network.function):
            snake = self._functions[f.type]["snake_name"]
            lines += [f"    free_{snake}_local_context(&(c->f{n}));",
                      f"    if (c->f{n}.local_context != 0) {{",
                      f"        rt_free_func(c->f{n}.local_context);",
                      f"        c->f{n}.local_context = 0;", "    }"]
        return lines

    @staticmethod
    def _switch(entries, names):
        lines = ["    switch(index) {"]
        lines += [f"        case {i}: return {names[x]}.data;" for i, x in enumerate(entries)]
        lines.append("    }")
        return lines

    def _source_file(self, folder, name, prefix):
        info = self._info
        sizes, buffers_of = plan_buffers(info)
        sizes = [int(s) for s in sizes]
        generated = []
        variables, names = self._variables(buffers_of, generated)
        initialize = self._parameter_pool(len(sizes)) + variables + \
            self._functions_setup(names)
        param_buffer = []
        if info.parameters:
            param_buffer = [f"float* {prefix}_param_buffer(void* context, int index)", "{",
                            f"    {prefix}_local_context_t* c = "
                            f"({prefix}_local_context_t*)context;"]
            param_buffer += self._switch(
                [p.variable_name for p in info.executor.parameter_variable], names)
            param_buffer += ["    return 0;", "}"]
        inference = [f"    exec_{self._functions[f.type]['snake_name']}(&(c->f{n}));"
                     for n, f in enumerate(info.network.function)]
        text = csrc_templates.csrc_implements.format(
            name=name, prefix=prefix,
            internal_defines="\n".join(self._context_struct(prefix, sizes) + generated),
            initialize_context="\n".join(initialize),
            free_context="\n".join(self._free_lines(len(sizes))),
            input_buffer="\n".join(self._switch(info.input_variables, names)),
            output_buffer="\n".join(self._switch(info.output_variables, names) + [""]),
            param_buffer="\n".join(param_buffer), inference="\n".join(inference))
        _write(os.path.join(folder, f"{name}_inference.c"), text)

    def _example_file(self, folder, name, prefix):
        info, upper = self._info, prefix.upper()
        includes = [f'#include "{name}_inference.h"']
        if info.parameters:
            includes.append(f'#include "{name}_parameters.h"')
            allocate = f"void *context = {prefix}_allocate_context({name}_parameters);"
        else:
            allocate = f"void *context = {prefix}_allocate_context(0);"
        reads = []
        for n in range(len(info.input_variables)):
            reads += [f'    FILE* input{n} = fopen(argv[{n + 1}], "rb");',
                      f"    assert(input{n});",
                      f"    int input_read_size{n} = fread({prefix}_input_buffer(context, {n}), "
                      f"sizeof(float), {upper}_INPUT{n}_SIZE, input{n});",
                      f"    assert(input_read_size{n} == {upper}_INPUT{n}_SIZE);",
                      f"    fclose(input{n});", ""]
        writes, argument = [], len(info.input_variables) + 1
        for n in range(len(info.output_variables)):
            writes += [f"    char* output_filename{n} = malloc(strlen(argv[{argument}]) + 10);",
                       f'    sprintf(output_filename{n}, "%s_{n}.bin", argv[{argument}]);',
                       f'    FILE* output{n} = fopen(output_filename{n}, "wb");',
                       f"    assert(output{n});",
                       f"    int output_write_size{n} = fwrite({prefix}_output_buffer(context, "
                       f"{n}), sizeof(float), {upper}_OUTPUT{n}_SIZE, output{n});",
                       f"    assert(output_write_size{n} == {upper}_OUTPUT{n}_SIZE);",
                       f"    fclose(output{n});", f"    free(output_filename{n});", ""]
        _write(os.path.join(folder, f"{name}_example.c"), csrc_templates.csrc_example.format(
            name=name, prefix=prefix, prefix_upper=upper, includes="\n".join(includes),
            allocate=allocate, num_of_input_buffers=len(info.input_variables),
            prepare_input_file="\n".join(reads), prepare_output_file="\n".join(writes)))

    def _makefile(self, folder, name):
        param = f" {name}_parameters.c" if self._info.parameters else ""
        _write(os.path.join(folder, "GNUmakefile"),
               csrc_templates.csrc_gnumake.format(name=name, param=param))

    def execute(self, output):
        """Write the C sources into the folder ``output`` (made if missing).

        Args:
            output (str): the folder.

        Returns:
            bool: True.

        Raises:
            ValueError: if ``output`` exists and is not a folder.
        """
        output = os.fspath(output)
        if os.path.exists(output) and not os.path.isdir(output):
            raise ValueError(f"CSRC export: output {output!r} exists and is not a folder; the "
                             f"C sources are written into a folder")
        os.makedirs(output, exist_ok=True)
        name = self._info.executor.network_name
        prefix = f"nnablart_{name.lower()}"
        if self._info.parameters:
            self._parameters_files(output, name)
        self._header_file(output, name, prefix)
        self._source_file(output, name, prefix)
        self._example_file(output, name, prefix)
        self._makefile(output, name)
        return True
