"""The core's structure: imports run one way, and the core never names a device."""
import ast
import pathlib

CORE = pathlib.Path(__file__).resolve().parents[2] / "nnabla_core"

# The execution layer and the graph engine: their imports are all at module level, so the
# order they load in is the order they depend on each other.
ENGINE = ["_state", "context", "array_family", "_array", "kernel", "_execute", "_graph",
          "_nd_array", "_variable", "_python_function", "function", "_dispatch", "_operators",
          "_kernel_grad", "_grad"]


def _modules():
    """Core module name -> source path (Python modules, and C modules by their .c source)."""
    mods = {}
    for path in [*CORE.rglob("*.py"), *CORE.rglob("*.c")]:
        parts = path.relative_to(CORE).with_suffix("").parts
        name = ".".join(("nnabla",) + (parts[:-1] if parts[-1] == "__init__" else parts))
        mods[name] = path
    return mods


def _imports(name, path, mods):
    """(imported core module, at module level?) pairs of module ``name``."""
    if path.suffix == ".c":
        return          # a C module imports no core module
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                yield (full if full in mods else target), node.col_offset == 0
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.col_offset == 0


def _graph():
    mods = _modules()
    return {m: {t for t, _ in _imports(m, p, mods) if t in mods and t != m}
            for m, p in mods.items()}


def test_the_core_has_no_import_cycle():
    graph, done, active, cycles = _graph(), set(), [], []

    def visit(m):
        if m in active:
            cycles.append(active[active.index(m):] + [m])
            return
        if m in done:
            return
        active.append(m)
        for t in sorted(graph[m]):
            visit(t)
        active.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)
    assert cycles == []


def test_engine_modules_import_the_core_only_at_module_level():
    mods = _modules()
    lazy = [f"{m} -> {t}" for m in (f"nnabla.{e}" for e in ENGINE)
            for t, top in _imports(m, mods[m], mods) if t in mods and not top]
    assert lazy == []


def test_the_core_names_no_device_outside_the_host_family_description():
    offenders = []
    for path in CORE.rglob("*.py"):
        if path.name == "array_family.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value == "cpu":
                offenders.append(f"{path.relative_to(CORE)}:{node.lineno}")
    assert offenders == []
