"""Print the layering counts of issue 11 (item 6) and issue 25 ("How it is judged"): lines per
unit and per package (each paper's room ``tvbo/algorithms/<paper>/`` apart), imports against the
layers (with file:line), upward arrows, two-file circles, imports inside functions with and
without a justification comment (``# lazy: <reason>``), single-paper modules outside the paper
packages, cycles between packages, import-time side effects.

Usage: ``python scripts/layer_report.py [PACKAGE_DIR]`` (default: the ``tvbo`` package imported).
The rules are those of :mod:`tvbo.testing.layers`; every violation is printed, including those
``tests/testing/test_layering.py`` accepts for now. Module cycles inside one package are listed for
information (the rules forbid only cycles between packages). Exit status 0 always: this is a
report; the test is the gate.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from tvbo.testing import layers


def main(argv: list[str]) -> int:
    if argv:
        root = Path(argv[0]).resolve()
    else:
        import tvbo

        root = Path(tvbo.__file__).parent
    modules = layers.scan(root)
    edges = layers.import_edges(modules)
    violations = layers.check(root)

    files: dict[str, int] = defaultdict(int)
    lines: dict[str, int] = defaultdict(int)
    for m in modules:
        unit = layers.unit_of(m.name) or "(unassigned)"
        files[unit] += 1
        lines[unit] += m.lines
    print(f"Lines per package ({root}), lowest layer first")
    print(f"  {'unit':<12} {'rank':>4} {'files':>5} {'lines':>7}  modules")
    order = sorted(files, key=lambda u: (layers.rank(u) if u in layers.UNITS else 99, u))
    for unit in order:
        holds = ", ".join(p.rstrip("$") for p in layers.UNITS.get(unit, ()))
        rank = layers.rank(unit) if unit in layers.UNITS else "-"
        print(f"  {unit:<12} {rank:>4} {files[unit]:>5} {lines[unit]:>7}  {holds}")
    print(f"  {'total':<12} {'':>4} {sum(files.values()):>5} {sum(lines.values()):>7}")

    def show(title: str, items: list[layers.Violation]) -> None:
        print(f"\n{title}: {len(items)}")
        for v in items:
            print(f"  {v}")

    layer = [v for v in violations if v.rule == "layer"]
    up = [v for v in layer if " points up" in v.message]
    sideways = [v for v in layer if " points sideways" in v.message]
    show("Imports that point up", up)
    show("Imports that point sideways (between independent packages)", sideways)
    show("Cycles between packages", [v for v in violations if v.rule == "cycle"])
    show("Import-time side effects", [v for v in violations if v.rule == "side-effect"])
    show("Modules outside every package of the table",
         [v for v in violations if v.rule == "unassigned"])

    inner = [c for c in layers.module_cycles(edges)
             if len({layers.unit_of(m) for m in c}) == 1]
    print(f"\nModule cycles inside one package (information): {len(inner)}")
    for c in inner:
        print(f"  {' -> '.join(c)}")

    print("\nLines per package (each paper package apart)")
    print(f"  {'package':<32} {'files':>5} {'lines':>7} {'share':>6}")
    total = sum(lines.values()) or 1
    for package, (n_files, n_lines) in layers.lines_per_package(modules, root).items():
        print(f"  {package:<32} {n_files:>5} {n_lines:>7} {n_lines / total:>6.1%}")

    circles = layers.two_file_circles(edges)
    print(f"\nTwo-file circles (modules importing each other): {len(circles)}")
    for a, b in circles:
        print(f"  {a} <-> {b}")
    arrows = layers.upward_arrows(violations, edges)
    print(f"\nUpward arrows (against the layers, or to an enclosing package): {len(arrows)}")
    for line in arrows:
        print(f"  {line}")
    deferred = layers.deferred_imports(modules)
    bare = [d for d in deferred if d.justification is None]
    print(f"\nImports inside functions: {len(deferred)} statements, "
          f"{len(deferred) - len(bare)} justified ('# {layers.JUSTIFICATION} <reason>' on the "
          f"line or above), {len(bare)} unjustified")
    for d in bare:
        print(f"  {d.path.relative_to(root.parent).as_posix()}:{d.line}: {', '.join(d.targets)}")
    single = layers.single_paper_modules(modules, edges, root)
    print(f"\nSingle-paper modules outside the paper packages: {len(single)} "
          f"(paper packages: {', '.join(layers.paper_packages(root)) or 'none'})")
    for module, room in single:
        print(f"  {module}: only {room} imports it")

    print(f"\nSummary: {len(modules)} modules, {sum(lines.values())} lines, "
          f"{len(edges)} internal imports ({sum(e.lazy for e in edges)} lazy re-exports, "
          f"{sum(e.function_level and not e.lazy for e in edges)} inside functions in "
          f"{len(deferred)} statements: {len(bare)} unjustified); "
          f"imports against the layers {len(layer)} (up {len(up)}, sideways {len(sideways)}), "
          f"upward arrows {len(arrows)}, two-file circles {len(circles)}, "
          f"single-paper modules outside paper packages {len(single)}, "
          f"package cycles {sum(v.rule == 'cycle' for v in violations)}, "
          f"import-time side effects {sum(v.rule == 'side-effect' for v in violations)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
