"""The package's import rules (issue 11 item 6), declared once, and the ``ast`` check of them.

Why a check of our own and not ``import-linter``: it needs no new dependency, it sees imports
inside functions (the package defers many heavy imports into function bodies, and a deferred
import that points up is as much a design error as a top-level one), and it also checks that no
module changes process state when it is imported.

The rules, all declared in this module:

* :data:`UNITS` assigns every module of the package to one *unit* (a sub-package, a top-level
  module, or the group of entry points). A module that no unit claims is an error, so a new
  package must be placed in the layers before it can be merged.
* :data:`DEPENDS_ON` says which units a unit sits on directly. A unit may import any unit it
  reaches through this table (layers only point down); anything else is a violation, reported
  as pointing *up* (the target sits above the importer) or *sideways* (two units that are
  independent by design, e.g. algorithms and benchmarks).
* :data:`FORBIDDEN` repeats the issue's explicit rules (e.g. algorithms never import
  benchmarks). They are implied by :data:`DEPENDS_ON`; listing them makes a violation's message
  say which rule it breaks and lets :func:`check_table` prove the table still encodes them.
* No import cycle between units (Tarjan's strongly connected components on the unit graph of the
  real imports).
* No import-time side effects: module-level code (including class bodies, excluding function
  bodies and ``if __name__ == "__main__"``) must not write ``os.environ``, change the working
  directory, ``sys.path``, warning filters, global random seeds, logging or matplotlib state
  (:data:`SIDE_EFFECT_CALLS`).

What counts as an import: ``import tvbo.x``, ``from tvbo.x import y`` (``y`` resolved to the
sub-module ``tvbo.x.y`` when that file exists), relative imports, and
``importlib.import_module("tvbo.x")`` / ``__import__("tvbo.x")`` with a constant string, at any
depth (module level, functions, ``if TYPE_CHECKING`` blocks: an annotation-only import is still a
dependency of the design). Imports inside a unit are not checked (cycles between modules of one
package are reported by ``scripts/layer_report.py`` for information).

``tests/testing/test_layering.py`` runs :func:`check` on the package (known exceptions listed
there, each with its reason) and on synthetic packages that break each rule;
``scripts/layer_report.py`` prints the counts the issue asks for.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEPENDS_ON",
    "FORBIDDEN",
    "JUSTIFICATION",
    "DeferredImport",
    "ancestor_imports",
    "deferred_imports",
    "lines_per_package",
    "paper_packages",
    "single_paper_modules",
    "two_file_circles",
    "upward_arrows",
    "SIDE_EFFECT_CALLS",
    "UNITS",
    "Forbidden",
    "Known",
    "ImportEdge",
    "Module",
    "Violation",
    "check",
    "check_table",
    "closure",
    "cycles",
    "import_edges",
    "module_cycles",
    "rank",
    "scan",
    "side_effects",
    "unit_of",
    "verdict",
]

# --------------------------------------------------------------------------------------------
# The contracts: the one place that declares the layers.
# --------------------------------------------------------------------------------------------

#: unit -> the modules it holds: a dotted name covers that module and everything below it;
#: a name ending in ``$`` covers exactly that module (the root package ``tvbo`` itself).
UNITS: dict[str, tuple[str, ...]] = {
    # work counting: the lowest layer (moved out of sim/ so that models can count their work)
    "work": ("tvbo.work",),
    # the package's version: a constant every layer may record (run files, oracle tables)
    "version": ("tvbo.version",),
    # the OpenBLAS kernel pin `import tvbo` sets before numpy loads (standard library only)
    "blas_kernel": ("tvbo.blas_kernel",),
    # the packages' lazy re-exports (PEP 562 __getattr__ from a table; standard library only)
    "lazy": ("tvbo._lazy",),
    # low-discrepancy point sets: pure numpy, used by optimisers, oracles and priors
    "qmc": ("tvbo.qmc",),
    # the lean L-BFGS-B driver (scipy's compiled routine without minimize's wrapper): used by
    # the GP fits and the acquisition optimiser
    "lbfgsb": ("tvbo.lbfgsb",),
    # the static catalogue of names: imports nothing from tvbo (it resolves "module:attr"
    # strings lazily) but its generated tables (tvbo._catalogue), so every layer may read it
    "registry": ("tvbo.registry", "tvbo._catalogue"),
    # geometry of a search space that changes with time (PE-GP-UCB's alternating hills): pure
    # numpy, shared by the benchmark that defines it and the algorithms that search it
    "search_space": ("tvbo.search_space",),
    # the switch between compiled (numba) and plain numpy hot loops: reads TVBO_JIT, imports
    # numba lazily (standard library only at import)
    "jit": ("tvbo.jit",),
    # GP numerics: kernels, the exact GP, fitting, temporal convolutions
    "gp": ("tvbo.gp",),
    # the model layer: the Model protocol and its capability protocols
    "models": ("tvbo.models",),
    # one UCB, beta rules, the multi-start optimiser, pending-query bookkeeping
    "acquisition": ("tvbo.acquisition",),
    # algorithms: compositions of models and acquisitions; know nothing of the problems they solve.
    # One sub-package per paper (tvbo/algorithms/<paper>/: its declarations, parts and the maths
    # only it uses); the shared parts (components, presets, composed, display) sit beside them
    "algorithms": ("tvbo.algorithms",),
    # public data sets: download, checksums, preparation; no knowledge of benchmarks' use
    "data": ("tvbo.data",),
    # benchmarks: objectives, noise, costs, f* oracles; know nothing of the algorithms
    "benchmarks": ("tvbo.benchmarks",),
    # the run-file format: layout, writing, validation, campaign merging
    "results": ("tvbo.results",),
    # the simulation engine: drives algorithms and benchmarks through their protocols
    "sim": ("tvbo.sim",),
    # tables, figures, metrics, theory: read run files, never drive a run
    "analysis": ("tvbo.analysis",),
    # entry points: the root package's lazy API, `python -m tvbo`, the CLI, the Python API, the
    # workflow's messages and the config cross-checks
    "entry": (
        "tvbo$",
        "tvbo.__main__",
        "tvbo.cli",
        "tvbo.api",
        "tvbo.workflow_messages",
        # the measured campaign-time model behind the start message's estimate
        "tvbo.campaign_time",
        "tvbo.config_check",
        # plugins: found by the entry points, registered into the algorithm/benchmark registries
        "tvbo.plugins",
        # the one declaration of the run options (tvbo.runspec): generates the CLI's flags and the
        # schema, checks the API and the engine's options (its checks read sim's profiles)
        "tvbo.runspec",
        # the output-path checks of the commands and the run-size guard of the option check
        "tvbo.outputs",
        "tvbo.resources",
    ),
    # helpers for tvbo's own tests: may use everything, and nothing in the package uses them
    "testing": ("tvbo.testing",),
}

#: unit -> the units it sits on directly (it may import everything these reach, transitively)
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "work": (),  # the lowest layer
    "version": (),  # a constant
    "blas_kernel": (),  # standard library only; runs before numpy is imported
    "lazy": (),  # standard library only; the root package loads it before numpy
    "qmc": (),  # a leaf utility
    "lbfgsb": (),  # a leaf utility (numpy and scipy only)
    "registry": (),  # a static table; must stay import-free so every layer may read it
    "search_space": (),  # a leaf utility
    "jit": (),  # standard library only; numba is imported when a fit first needs it
    "gp": ("work", "lbfgsb", "jit"),  # counts its work; fits run L-BFGS-B, compiled if jit is on
    "models": ("gp",),  # the protocols describe the GP implementations
    "acquisition": ("models", "qmc"),  # acquisitions are functions of a model's posterior
    # compose models and acquisitions
    "algorithms": ("acquisition", "lazy", "registry", "search_space"),
    "data": (),  # raw data files; no tvbo dependency
    # real-data benchmarks read prepared data; a benchmark may declare candidate priors as models
    # (PE-GP-UCB's problems come with their priors: tvbo.models.candidate_prior)
    "benchmarks": ("data", "lazy", "models", "qmc", "registry", "search_space", "version"),
    "results": ("lazy", "version"),  # the run-file format (written by sim, read by analysis)
    "sim": ("algorithms", "benchmarks", "results"),  # above the algorithms and benchmarks
    "analysis": ("sim", "results"),  # results <- analysis (and the run conditions of sim)
    # results <- analysis <- cli/api/workflow
    "entry": ("analysis", "lazy", "version", "blas_kernel"),
    "testing": ("entry",),  # the very top
}


@dataclass(frozen=True)
class Forbidden:
    """An explicit rule of the issue: ``source`` never imports ``target``."""

    source: str
    target: str
    reason: str


#: the issue's explicit rules (implied by DEPENDS_ON; :func:`check_table` proves it)
FORBIDDEN: tuple[Forbidden, ...] = (
    *(Forbidden(low, high, f"{low} sits below {high} (work <- gp <- models <- acquisition <- "
                f"algorithms)")
      for i, low in enumerate(("work", "gp", "models", "acquisition"))
      for high in ("gp", "models", "acquisition", "algorithms")[i:]),
    Forbidden("benchmarks", "algorithms", "benchmarks never import algorithms"),
    Forbidden("data", "algorithms", "data never import algorithms"),
    *(Forbidden("algorithms", other, f"algorithms never import {other}: an algorithm sees its "
                f"problem only through the protocol the engine hands it")
      for other in ("benchmarks", "data", "analysis", "sim")),
    Forbidden("benchmarks", "sim", "sim sits above the benchmarks it drives"),
    Forbidden("results", "analysis", "results <- analysis"),
    Forbidden("analysis", "entry", "analysis <- cli/api/workflow"),
    Forbidden("results", "entry", "results <- cli/api/workflow"),
    *(Forbidden(unit, "testing", "nothing in the package depends on its test helpers")
      for unit in DEPENDS_ON if unit not in ("testing",)),
)

#: dotted calls that change process state; forbidden at import time (module level)
SIDE_EFFECT_CALLS: frozenset[str] = frozenset({
    "os.environ.setdefault", "os.environ.update", "os.environ.pop", "os.environ.popitem",
    "os.environ.clear", "os.putenv", "os.unsetenv", "os.chdir", "os.umask",
    "sys.path.append", "sys.path.insert", "sys.path.extend", "sys.path.remove",
    "sys.setrecursionlimit", "sys.settrace", "sys.setprofile",
    "warnings.filterwarnings", "warnings.simplefilter", "warnings.resetwarnings",
    "numpy.random.seed", "random.seed", "logging.basicConfig", "signal.signal",
    "matplotlib.use", "matplotlib.rcParams.update", "matplotlib.pyplot.rcParams.update",
    "matplotlib.pyplot.style.use", "matplotlib.style.use", "numpy.seterr",
    "numpy.set_printoptions", "faulthandler.enable", "atexit.register",
})
#: dotted names whose items may not be assigned or deleted at import time
SIDE_EFFECT_TARGETS: frozenset[str] = frozenset({
    "os.environ", "sys.path", "matplotlib.rcParams", "matplotlib.pyplot.rcParams",
})

# --------------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    """One module of the package: dotted name, file and source lines."""

    name: str
    path: Path
    lines: int


@dataclass(frozen=True)
class ImportEdge:
    """One import of a package module by a package module."""

    source: str  # importing module
    target: str  # imported module (resolved to a sub-module where the file exists)
    path: Path
    line: int
    function_level: bool  # inside a function body (deferred import)
    #: named by a lazy re-export table (``lazy_exports(__name__, {"name": "tvbo.x"})``,
    #: :mod:`tvbo._lazy`): loaded on first access, like a deferred import, justified by the table
    lazy: bool = False


@dataclass(frozen=True)
class Violation:
    """A broken rule. :attr:`key` ignores line numbers, so exceptions survive edits nearby."""

    rule: str  # "unassigned", "layer", "cycle", "side-effect"
    path: str  # file relative to the package's parent ("tvbo/algorithms/bolt/parts.py")
    line: int
    detail: str  # imported module, cycle "a -> b -> a", or the offending statement
    message: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.path, self.detail)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.message}"


def scan(root: Path) -> list[Module]:
    """Every module of the package whose directory is ``root`` (``.../tvbo``), sorted."""
    root = Path(root)
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        text = path.read_text(encoding="utf-8")
        out.append(Module(".".join(parts), path, len(text.splitlines())))
    return out


def unit_of(module: str, units: Mapping[str, tuple[str, ...]] = UNITS) -> str | None:
    """The unit holding ``module`` (the most specific declaration wins), or None."""
    best: tuple[int, str] | None = None
    for unit, prefixes in units.items():
        for prefix in prefixes:
            exact = prefix.endswith("$")
            name = prefix.rstrip("$")
            if module == name or (not exact and module.startswith(name + ".")):
                if best is None or len(name) > best[0]:
                    best = (len(name), unit)
    return None if best is None else best[1]


def _resolve_relative(module: Module, level: int, name: str | None) -> str:
    is_package = module.path.name == "__init__.py"
    base = module.name.split(".")
    drop = level - 1 if is_package else level
    base = base[: len(base) - drop] if drop else base
    return ".".join([*base, name] if name else base)


def _top(root_name: str, name: str) -> bool:
    return name == root_name or name.startswith(root_name + ".")


class _ImportVisitor(ast.NodeVisitor):
    def __init__(self, module: Module, known: set[str], root_name: str) -> None:
        self.module, self.known, self.root_name = module, known, root_name
        self.depth = 0
        self.seen: set[tuple[str, int]] = set()
        self.edges: list[ImportEdge] = []

    def _add(self, target: str, line: int, *, lazy: bool = False) -> None:
        if _top(self.root_name, target) and (target, line) not in self.seen:
            self.seen.add((target, line))
            self.edges.append(ImportEdge(self.module.name, target, self.module.path, line,
                                         self.depth > 0 or lazy, lazy))

    def visit_Module(self, node: ast.Module) -> None:
        #: module-level dict literals by name: the tables a ``lazy_exports`` call may name
        self.tables = {t.id: stmt.value for stmt in node.body
                       if isinstance(stmt, ast.Assign | ast.AnnAssign)
                       and isinstance(stmt.value, ast.Dict)
                       for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                       if isinstance(t, ast.Name)}
        self.generic_visit(node)

    def _lazy_table(self, node: ast.Call) -> None:
        """The modules of a ``lazy_exports(package, table)`` call's table (a dict literal, or
        the name of a module-level one), as lazy edges at the table's lines."""
        table = node.args[1] if len(node.args) > 1 else None
        if isinstance(table, ast.Name):
            table = getattr(self, "tables", {}).get(table.id)
        if isinstance(table, ast.Dict):
            for value in table.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self._add(value.value, value.lineno, lazy=True)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = (_resolve_relative(self.module, node.level, node.module) if node.level
                else node.module or "")
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(sub if sub in self.known else base, node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = (func.attr if isinstance(func, ast.Attribute)
                else func.id if isinstance(func, ast.Name) else "")
        if (name in ("import_module", "__import__") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            self._add(node.args[0].value, node.lineno)
        if name == "lazy_exports":
            self._lazy_table(node)
        self.generic_visit(node)


def import_edges(modules: Iterable[Module]) -> list[ImportEdge]:
    """Every import of a package module by a package module (any depth), in file order."""
    modules = list(modules)
    known = {m.name for m in modules}
    root_name = min(known, key=len).split(".")[0] if known else ""
    edges: list[ImportEdge] = []
    for module in modules:
        visitor = _ImportVisitor(module, known, root_name)
        visitor.visit(ast.parse(module.path.read_text(encoding="utf-8"), str(module.path)))
        edges += visitor.edges
    return edges


def closure(unit: str, depends_on: Mapping[str, tuple[str, ...]] = DEPENDS_ON) -> set[str]:
    """The units ``unit`` may import: everything reachable through ``depends_on``."""
    seen: set[str] = set()
    stack = list(depends_on.get(unit, ()))
    while stack:
        item = stack.pop()
        if item not in seen:
            seen.add(item)
            stack.extend(depends_on.get(item, ()))
    return seen


def rank(unit: str, depends_on: Mapping[str, tuple[str, ...]] = DEPENDS_ON) -> int:
    """Height of ``unit`` in the layers: 0 for a unit that sits on nothing."""
    below = depends_on.get(unit, ())
    return 0 if not below else 1 + max(rank(u, depends_on) for u in below)


def _strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one node (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                comp.append(item)
                if item == node:
                    break
            if len(comp) > 1 or node in graph.get(node, ()):
                out.append(sorted(comp))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def _cycle_path(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """One closed path through a strongly connected component, starting at its first node."""
    start = component[0]
    members = set(component)
    # breadth-first search back to start, inside the component
    paths = {nxt: [start, nxt] for nxt in sorted(graph[start] & members)}
    frontier = list(paths)
    while start not in paths and frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return paths.get(start, [start, start])


def cycles(edges: Iterable[ImportEdge],
           units: Mapping[str, tuple[str, ...]] = UNITS) -> list[list[str]]:
    """Import cycles between units: one closed path per strongly connected component."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        a, b = unit_of(edge.source, units), unit_of(edge.target, units)
        if a and b and a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    return [_cycle_path(comp, graph) for comp in _strongly_connected(graph)]


def module_cycles(edges: Iterable[ImportEdge]) -> list[list[str]]:
    """Import cycles between modules (for information: a package may hold them)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        if edge.source != edge.target:
            graph.setdefault(edge.source, set()).add(edge.target)
            graph.setdefault(edge.target, set())
    return [_cycle_path(comp, graph) for comp in _strongly_connected(graph)]


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted name for the module's imports (``np`` -> ``numpy``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _dotted(node: ast.AST, aliases: Mapping[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _import_time_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run when the module is imported (class bodies yes, functions no)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) or _is_main_guard(stmt):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            yield from _import_time_statements(getattr(stmt, field, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _import_time_statements(handler.body)


def _shallow(stmt: ast.stmt) -> Iterable[ast.AST]:
    """The nodes of ``stmt`` itself, not of the statements nested in its blocks."""
    nested = {id(s) for f in ("body", "orelse", "finalbody", "handlers")
              for s in getattr(stmt, f, []) or []}
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if id(child) not in nested and not isinstance(child, ast.Lambda):
                stack.append(child)


def side_effects(module: Module) -> list[tuple[int, str]]:
    """``(line, what)`` for each process-state change ``module`` makes when imported."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    aliases = _aliases(tree)
    found: list[tuple[int, str]] = []
    for stmt in _import_time_statements(tree.body):
        for node in _shallow(stmt):
            if isinstance(node, ast.Call):
                name = _dotted(node.func, aliases)
                if name in SIDE_EFFECT_CALLS:
                    found.append((node.lineno, f"calls {name}()"))
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.Delete):
                targets = list(getattr(node, "targets", [getattr(node, "target", None)]))
            for target in targets:
                base = target.value if isinstance(target, ast.Subscript) else target
                name = _dotted(base, aliases) if base is not None else None
                if name in SIDE_EFFECT_TARGETS:
                    verb = "deletes from" if isinstance(node, ast.Delete) else "writes"
                    found.append((node.lineno, f"{verb} {name}"))
    return sorted(set(found))


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root.parent).as_posix()


def check(
    root: Path,
    *,
    units: Mapping[str, tuple[str, ...]] = UNITS,
    depends_on: Mapping[str, tuple[str, ...]] = DEPENDS_ON,
    forbidden: Iterable[Forbidden] = FORBIDDEN,
) -> list[Violation]:
    """Every broken rule in the package at ``root`` (its directory, e.g. ``.../tvbo``)."""
    root = Path(root)
    modules = scan(root)
    rules = {(f.source, f.target): f.reason for f in forbidden}
    out: list[Violation] = []
    for m in modules:
        if unit_of(m.name, units) is None:
            out.append(Violation("unassigned", _rel(m.path, root), 1, m.name,
                                 f"module {m.name} belongs to no unit of the layers table "
                                 f"(add it to tvbo.testing.layers.UNITS)"))
    edges = import_edges(modules)
    for e in edges:
        a, b = unit_of(e.source, units), unit_of(e.target, units)
        if a is None or b is None or a == b or b in closure(a, depends_on):
            continue
        where = "inside a function" if e.function_level else "at module level"
        direction = "up" if a in closure(b, depends_on) else "sideways"
        allowed = ", ".join(sorted(closure(a, depends_on))) or "nothing"
        reason = rules.get((a, b), f"{a} may import only {allowed}")
        out.append(Violation("layer", _rel(e.path, root), e.line, e.target,
                             f"{a} -> {b} points {direction}: {e.source} imports {e.target} "
                             f"{where} ({reason})"))
    for path in cycles(edges, units):
        first = next(e for e in edges if unit_of(e.source, units) == path[0]
                     and unit_of(e.target, units) == path[1])
        out.append(Violation("cycle", _rel(first.path, root), first.line, " -> ".join(path),
                             f"import cycle between packages: {' -> '.join(path)}"))
    for m in modules:
        for line, what in side_effects(m):
            out.append(Violation("side-effect", _rel(m.path, root), line, what,
                                 f"{m.name} {what} when imported (move it into a function)"))
    return out


def check_table(
    units: Mapping[str, tuple[str, ...]] = UNITS,
    depends_on: Mapping[str, tuple[str, ...]] = DEPENDS_ON,
    forbidden: Iterable[Forbidden] = FORBIDDEN,
) -> list[str]:
    """Problems of the declaration itself: unknown units, a cycle in DEPENDS_ON, or a FORBIDDEN
    rule that DEPENDS_ON allows."""
    problems = []
    for unit, below in depends_on.items():
        problems += [f"DEPENDS_ON[{unit!r}] names unknown unit {u!r}" for u in below
                     if u not in units]
    problems += [f"unit {u!r} has no DEPENDS_ON entry" for u in units if u not in depends_on]
    graph = {u: set(b) for u, b in depends_on.items()}
    problems += [f"DEPENDS_ON has a cycle: {' -> '.join(c)}" for c in
                 [_cycle_path(comp, graph) for comp in _strongly_connected(graph)]]
    for rule in forbidden:
        if rule.source not in units or rule.target not in units:
            problems.append(f"FORBIDDEN names an unknown unit: {rule}")
        elif rule.target in closure(rule.source, depends_on):
            problems.append(f"DEPENDS_ON lets {rule.source} import {rule.target}, but "
                            f"FORBIDDEN says: {rule.reason}")
    return problems


@dataclass(frozen=True)
class Known:
    """A violation accepted for now, with its reason and fix (``tests/testing/test_layering.py``).

    Matched on ``(rule, path, detail)``, not the line, so edits elsewhere in the file keep it.
    """

    rule: str
    path: str
    detail: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.path, self.detail)


def verdict(violations: Iterable[Violation], known: Iterable[Known]) -> list[str]:
    """What a test must refuse: violations not listed as known, and known ones that are gone
    (a stale exception: remove it from the list, so the list only shrinks)."""
    violations = list(violations)
    known = list(known)
    found = {v.key for v in violations}
    listed = {k.key for k in known}
    problems = [f"new violation: {v}" for v in violations if v.key not in listed]
    problems += [f"stale exception (fixed? remove it from ALLOWED_EXCEPTIONS): "
                 f"{k.rule} {k.path} {k.detail}" for k in known if k.key not in found]
    problems += [f"exception listed twice: {k.key}" for i, k in enumerate(known)
                 if k.key in {j.key for j in known[:i]}]
    problems += [f"exception without a reason: {k.key}" for k in known if not k.reason.strip()]
    return problems


# --------------------------------------------------------------------------------------------
# The counts of issue 25 ("How it is judged"), printed by scripts/layer_report.py
# --------------------------------------------------------------------------------------------

#: the comment that justifies an import inside a function, on its line or the line above
#: (``# lazy: start-up cost (tests/test_startup.py)``): why it is not at module level
JUSTIFICATION = "lazy:"


@dataclass(frozen=True)
class DeferredImport:
    """An import of a package module inside a function, and its justification (None: none)."""

    path: Path
    line: int
    source: str
    targets: tuple[str, ...]
    justification: str | None


def two_file_circles(edges: Iterable[ImportEdge]) -> list[tuple[str, str]]:
    """Pairs of modules that import each other (at any depth), each pair once, sorted: the
    circles an import inside a function usually closes (one of the two belongs elsewhere)."""
    pairs = {(e.source, e.target) for e in edges if e.source != e.target}
    return sorted((a, b) for a, b in pairs if a < b and (b, a) in pairs)


def ancestor_imports(edges: Iterable[ImportEdge]) -> list[ImportEdge]:
    """Imports of the namespace of a package that encloses the importer (``tvbo.api`` importing
    ``from tvbo import __version__``): they point up the package tree, to an ``__init__`` whose
    lazy exports may lead back to the importer."""
    return [e for e in edges if e.source != e.target and e.source.startswith(e.target + ".")]


def upward_arrows(violations: Iterable[Violation], edges: Iterable[ImportEdge]) -> list[str]:
    """Every import that points up: against the layers (:func:`check`) or to an enclosing
    package's namespace (:func:`ancestor_imports`), one line each."""
    out = [str(v) for v in violations if v.rule == "layer" and " points up" in v.message]
    out += [f"{e.path.name}:{e.line}: {e.source} imports its enclosing package {e.target}"
            for e in ancestor_imports(edges)]
    return out


def _comment(text: str) -> str | None:
    """The comment of one source line (None: none); a ``#`` inside a string is not one."""
    import io
    import tokenize

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                return tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):
        return None
    return None


def deferred_imports(modules: Iterable[Module],
                     marker: str = JUSTIFICATION) -> list[DeferredImport]:
    """Every import of a package module inside a function, with the justification comment
    (starting with ``marker``) on the statement's lines or in the comment block right above it
    or above the block of import statements it belongs to (a reason may run over several
    comment lines; one comment may cover the imports of one block)."""
    modules = list(modules)
    by_line: dict[tuple[Path, int], list[ImportEdge]] = {}
    for edge in import_edges(modules):
        if edge.function_level and not edge.lazy:
            by_line.setdefault((edge.path, edge.line), []).append(edge)
    out = []
    for (path, line), found in sorted(by_line.items()):
        lines = path.read_text(encoding="utf-8").splitlines()
        tree_end = _statement_end(path, line)
        # the comment block right above the statement, or above the run of import statements
        # it ends (one comment may justify a block of deferred imports, as ruff groups them)
        above = line - 1
        while above > 0 and lines[above - 1].lstrip().startswith(("#", "from ", "import ")):
            above -= 1
        reason = None
        for number in (*range(above + 1, line), *range(line, tree_end + 1)):
            comment = _comment(lines[number - 1])
            if comment and comment.startswith(marker):
                reason = comment[len(marker):].strip() or None
                break
        out.append(DeferredImport(path, line, found[0].source,
                                  tuple(sorted({e.target for e in found})), reason))
    return out


def _statement_end(path: Path, line: int) -> int:
    """The last line of the import statement starting at ``line`` (multi-line ``from`` lists)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno == line:
            return node.end_lineno or line
    return line


def lines_per_package(modules: Iterable[Module], root: Path,
                      split: Iterable[str] = ("algorithms",)) -> dict[str, tuple[int, int]]:
    """``package -> (files, lines)``: a module counts for the top-level package whose directory
    holds it (``tvbo.gp``; the root's own modules for ``tvbo``), and a module in a sub-package of
    a package named in ``split`` for that sub-package (one room per paper:
    ``tvbo.algorithms.bolt`` apart from the shared ``tvbo.algorithms``)."""
    root = Path(root)
    split = tuple(split)
    out: dict[str, list[int]] = {}
    for m in modules:
        dirs = m.path.relative_to(root).parts[:-1]
        keep = 2 if dirs and dirs[0] in split and len(dirs) >= 2 else 1
        key = ".".join((root.name, *dirs[:keep]))
        files_lines = out.setdefault(key, [0, 0])
        files_lines[0] += 1
        files_lines[1] += m.lines
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def paper_packages(root: Path, papers: str = "algorithms") -> list[str]:
    """The dotted names of the paper packages: the sub-packages of ``<root>/<papers>/``."""
    root = Path(root)
    base = root / papers
    return sorted(f"{root.name}.{papers}.{p.parent.name}" for p in base.glob("*/__init__.py"))


def single_paper_modules(modules: Iterable[Module], edges: Iterable[ImportEdge], root: Path,
                         papers: str = "algorithms") -> list[tuple[str, str]]:
    """``(module, paper package)`` for each module outside the paper packages whose importers
    in the package all sit in exactly one paper package: it serves one paper only, so it
    belongs in that paper's room. A module nothing imports (a plug-in, a script) is not one."""
    rooms = paper_packages(root, papers)

    def room(name: str) -> str | None:
        return next((r for r in rooms if name == r or name.startswith(r + ".")), None)

    importers: dict[str, set[str]] = {}
    for e in edges:
        if e.source != e.target:
            importers.setdefault(e.target, set()).add(e.source)
    out = []
    for m in modules:
        if room(m.name) is not None or m.name not in importers:
            continue
        homes = {room(source) for source in importers[m.name]}
        if len(homes) == 1 and None not in homes:
            out.append((m.name, homes.pop()))
    return sorted(out)
