"""Imports flow one way (docs/architecture.md): no private name is imported across modules,
the core imports no method, and the reporting layer imports nothing of the methods."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Folders whose Python files are checked for private imports.
CHECKED = ("tabsdc", "microsdc", "sdcreport", "benchmarks", "examples", "tests")

#: The core modules (docs/architecture.md, "Layers").
CORE = ("tabsdc.table", "tabsdc.hierarchy", "tabsdc.structure", "tabsdc.codes",
        "tabsdc.inputs", "tabsdc.network", "tabsdc.microdata", "tabsdc.microdata_dask",
        "tabsdc.validation", "tabsdc.progress", "tabsdc.errors", "tabsdc.io", "tabsdc.io.jj",
        "tabsdc.io.csvfile")

#: The method, interface and linked-table packages the core must not import.
ABOVE_CORE = ("tabsdc.rules", "tabsdc.suppression", "tabsdc.audit", "tabsdc.rounding",
              "tabsdc.cta", "tabsdc.mdi", "tabsdc.release", "tabsdc.tableset", "tabsdc.cli",
              "tabsdc.ui", "tabsdc.io.argus", "tabsdc.solver", "tabsdc.ckm",
              "tabsdc.differencing")


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
    """``from m import _name`` never; a private module (``pkg/_mod.py``) only from inside the
    package that holds it."""
    problems = []
    for path in python_files():
        importer = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, module, names in runtime_imports(tree):
            where = f"{path.relative_to(ROOT)}:{line}"
            problems += [f"{where} imports {module}.{n}" for n in names if private(n)]
            parts = module.split(".")
            for k, part in enumerate(parts):
                holder = ".".join(parts[:k])
                if private(part) and not (importer == holder
                                          or importer.startswith(holder + ".")):
                    problems.append(f"{where} imports the private module {module}")
    assert problems == []


@pytest.mark.parametrize("path", [p for p in python_files() if module_name(p) in CORE],
                         ids=lambda p: module_name(p))
def test_the_core_imports_no_method(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    shim = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
            and f.name == "apply_rules" for n in ast.walk(f)}  # deprecated, for one release
    above = [(line, module) for line, module, _ in runtime_imports(tree)
             if module.startswith(ABOVE_CORE)
             and not any(id(n) in shim for n in ast.walk(tree)
                         if getattr(n, "lineno", None) == line)]
    assert above == []


def test_the_reporting_layer_imports_nothing_of_the_methods():
    imports = [(path.name, module) for path in (ROOT / "sdcreport").rglob("*.py")
               for _, module, _ in runtime_imports(ast.parse(path.read_text()))
               if module.startswith(("tabsdc", "microsdc"))]
    assert imports == []
