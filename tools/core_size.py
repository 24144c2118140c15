"""Report the size of the core package (a report, not a gate)."""
import ast
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent / "nnabla_core"
files = sorted(root.rglob("*.py"))
lines = 0
largest = (0, "")
for path in files:
    text = path.read_text()
    lines += text.count("\n")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size = node.end_lineno - node.lineno + 1
            if size > largest[0]:
                largest = (size, f"{path.relative_to(root)}:{node.name}")
print(f"nnabla_core: {len(files)} files, {lines} lines; largest function {largest[1]} "
      f"({largest[0]} lines)")
