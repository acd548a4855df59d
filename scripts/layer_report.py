"""Print the layering counts of issue 11 (item 6): lines per package, imports against the layers
(with file:line), cycles between packages, import-time side effects.

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
    deferred = sum(e.function_level for e in edges)
    print(f"\nSummary: {len(modules)} modules, {sum(lines.values())} lines, "
          f"{len(edges)} internal imports ({deferred} inside functions); "
          f"imports against the layers {len(layer)} (up {len(up)}, sideways {len(sideways)}), "
          f"package cycles {sum(v.rule == 'cycle' for v in violations)}, "
          f"import-time side effects {sum(v.rule == 'side-effect' for v in violations)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
