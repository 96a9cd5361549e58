"""Print the package's import graph against sparsym/_layers.py: upward edges and module cycles.

    python tools/layers.py            # report (counts, every upward edge, every cycle)
    python tools/layers.py --docs     # rewrite the layer table in docs/architecture.md
"""
import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_layers", ROOT / "sparsym" / "_layers.py")
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)

BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"


def write_docs(path: Path = ROOT / "docs" / "architecture.md") -> None:
    """Replace the text between the layer markers of ``path`` with the rendered table."""
    text = path.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{layers.render_markdown()}\n{END}{tail}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", action="store_true", help="rewrite docs/architecture.md's table")
    args = ap.parse_args(argv)
    if args.docs:
        write_docs()
        return 0
    graph = layers.import_graph(ROOT / "sparsym")
    up = layers.upward_edges(graph)
    cycles = layers.module_cycles(graph)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} edges, "
          f"{len(up)} upward ({sum(1 for e in up if e[2])} lazy), {len(cycles)} module cycles, "
          f"{len(layers.ALLOWED_UPWARD)} allow-list entries")
    for m, line, lazy, dep in up:
        print(f"  up  {m}:{line}{' (lazy)' if lazy else ''} -> {dep}")
    for c in cycles:
        print("  cycle", " <-> ".join(c))
    for p in layers.problems(ROOT / "sparsym"):
        print("  PROBLEM", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
