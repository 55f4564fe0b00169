"""Imports flow one way (docs/architecture.md): no private name is imported across modules,
every module is in one layer of the page's table, a layer imports only its own layer and the
layers below it, and no modules (nor packages) import each other in a circle. Every import
counts: at module level, inside functions, and under ``if TYPE_CHECKING:``."""

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]

#: Folders whose Python files are checked for private imports.
CHECKED = ("tabsdc", "microsdc", "sdcreport", "benchmarks", "examples", "tests")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def python_files() -> list[Path]:
    return sorted(p for folder in CHECKED for p in (ROOT / folder).rglob("*.py"))


def runtime_imports(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import that runs (those under ``if TYPE_CHECKING:``
    left out)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name, []) for a in node.names)
    return found


def private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def test_no_private_name_is_imported_across_modules():
    """``from m import _name`` never: a private name stays in its module. Private modules
    (``pkg/_mod.py``, every module of the packages) are the distribution's insides: its
    packages, tests and benchmarks import them; the examples, which users copy, import only
    the public names of the packages (docs/api.md)."""
    problems = []
    for path in python_files():
        users = path.relative_to(ROOT).parts[0] == "examples"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, module, names in runtime_imports(tree):
            where = f"{path.relative_to(ROOT)}:{line}"
            problems += [f"{where} imports {module}.{n}" for n in names if private(n)]
            if users and any(private(part) for part in module.split(".")):
                problems.append(f"{where} imports the private module {module}")
    assert problems == []


def test_only_packages_define_all():
    """The public surface is the ``__all__`` of the packages' ``__init__`` (docs/api.md);
    modules, all private, define none."""
    defining = [str(p.relative_to(ROOT)) for p in python_files()
                if p.relative_to(ROOT).parts[0] in LAYERED and p.name != "__init__.py"
                and re.search(r"^__all__\b", p.read_text(encoding="utf-8"), re.M)]
    assert defining == []


def test_every_module_of_a_package_is_private():
    public = [str(p.relative_to(ROOT)) for p in python_files()
              if p.relative_to(ROOT).parts[0] in LAYERED
              and not p.name.startswith("_")
              and not any(private(part) for part in p.relative_to(ROOT).parts[:-1])]
    assert public == []


#: Packages whose modules are placed in the layers.
LAYERED = ("tabsdc", "microsdc", "sdcreport")

def layer_table() -> list[tuple[str, list[str]]]:
    """(layer, its modules) from docs/architecture.md's table, top layer first."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines()
            if line.startswith("| ") and "`" in line.split("|")[2]]
    return [(layer.strip(), re.findall(r"`([\w.]+)`", modules)) for layer, modules in rows]


def layered_modules() -> dict[str, Path]:
    return {module_name(p): p for package in LAYERED for p in (ROOT / package).rglob("*.py")}


def unit_of(module: str, units: set[str]) -> str | None:
    """The unit of the table a module belongs to: the longest name that is the module or a
    package holding it (a package's face, ``tabsdc/__init__.py``, is ``tabsdc.__init__``)."""
    if "." not in module and module not in units:
        return f"{module}.__init__" if f"{module}.__init__" in units else None
    holders = [u for u in units if module == u or module.startswith(u + ".")]
    return max(holders, key=len, default=None)


def all_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module or module.name) of every import, wherever it stands."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
    return found


def import_graph() -> nx.DiGraph:
    """Module -> module it imports, over the layered packages, with the lines."""
    modules = layered_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for importer, path in modules.items():
        for line, name in all_imports(ast.parse(path.read_text(encoding="utf-8"))):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != importer:
                lines = graph.get_edge_data(importer, name, {"lines": []})["lines"]
                graph.add_edge(importer, name, lines=[*lines, f"{path.name}:{line}"])
    return graph


def circles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_every_module_is_in_exactly_one_layer():
    listed = [unit for _, units in layer_table() for unit in units]
    assert len(layer_table()) >= 5
    assert sorted(u for u in set(listed) if listed.count(u) > 1) == []
    units = set(listed)
    assert sorted(m for m in layered_modules() if unit_of(m, units) is None) == []
    assert sorted(u for u in units if not any(unit_of(m, units) == u
                                              for m in layered_modules())) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(import_graph()) == []


def test_no_packages_import_each_other_in_a_circle():
    """Between the units of the layer table (``tabsdc.cta`` and ``tabsdc.mdi`` say); a
    package's ``__main__`` (``python -m tabsdc.ui``) is a script that nothing imports."""
    units = {u for _, us in layer_table() for u in us}
    graph = nx.DiGraph()
    for a, b in import_graph().edges:
        if unit_of(a, units) != unit_of(b, units) and not a.endswith(".__main__"):
            graph.add_edge(unit_of(a, units), unit_of(b, units))
    assert circles(graph) == []


def test_a_layer_imports_only_itself_and_the_layers_below():
    """The core imports no method, no method an interface, the reporting layer nothing of
    the toolkit's methods (it is the lowest layer)."""
    rank = {unit: k for k, (_, units) in enumerate(layer_table()) for unit in units}
    upward = []
    for a, b, data in import_graph().edges(data=True):
        ua, ub = unit_of(a, set(rank)), unit_of(b, set(rank))
        if rank[ub] < rank[ua]:
            upward.append(f"{a} ({layer_table()[rank[ua]][0]}) imports {b} "
                          f"({layer_table()[rank[ub]][0]}): {', '.join(data['lines'])}")
    assert upward == []


def test_the_check_sees_deferred_and_type_checking_imports():
    tree = ast.parse("if TYPE_CHECKING:\n    from a.b import C\n"
                     "def f():\n    import d\n    from e import g\n")
    assert all_imports(tree) == [(2, "a.b.C"), (4, "d"), (5, "e.g")]
    graph = nx.DiGraph([("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")])
    assert circles(graph) == [["x", "y", "z"]]
