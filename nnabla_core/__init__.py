"""nnabla: the core package (contexts, arrays, graph, functions interface)."""
