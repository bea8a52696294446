"""The package's layout: every module of the installed package imports first in a fresh
interpreter, the modules import one another without a cycle and never from the package itself,
and ``colflow/__init__.py`` only re-exports what they define."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import colflow

PACKAGE_DIR = Path(colflow.__file__).resolve().parent


def module_names() -> list[str]:
    """The modules of the installed package: its .py files but __init__, and the extension."""
    names = {inspect.getmodulename(path) for path in PACKAGE_DIR.iterdir() if path.is_file()}
    return sorted(names - {None, "__init__"})


MODULES = module_names()


def relative_imports(path: Path) -> list[tuple[str | None, list[str]]]:
    """The package-relative imports of a module file, anywhere in it: (module, names) for
    ``from .module import names``, (None, names) for ``from . import names``. Absolute imports
    of the package count too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level == 1:
                found.append((node.module, names))
            elif node.level == 0 and node.module is not None and (
                    node.module == "colflow" or node.module.startswith("colflow.")):
                inner = node.module.partition(".")[2]
                found.append((inner or None, names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "colflow" or alias.name.startswith("colflow."):
                    found.append((alias.name.partition(".")[2] or None, []))
    return found


def test_the_package_has_its_modules():
    # The list the tests below run over: a test over no module would pass for nothing.
    assert {"_core", "_errors", "_store", "_preprocess", "_scans", "_models"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_first_in_a_fresh_interpreter(name):
    # Run from the directory holding this very package, so the child imports the same files.
    result = subprocess.run(
        [sys.executable, "-c", f"import colflow.{name}"],
        cwd=PACKAGE_DIR.parent, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, f"import colflow.{name} failed:\n{result.stderr}"


def test_modules_import_no_cycle_and_not_the_package():
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        path = PACKAGE_DIR / f"{name}.py"
        if not path.exists():
            continue  # the compiled extension
        graph[name] = set()
        for module, names in relative_imports(path):
            if module is None:
                # `from . import x` is allowed for a module x only: a name of the package
                # itself would come from __init__, which imports every module.
                not_modules = [n for n in names if n not in MODULES]
                assert not not_modules, f"{name} imports {not_modules} from the package"
                graph[name].update(names)
            else:
                assert module.partition(".")[0] in MODULES, f"{name} imports {module}"
                graph[name].add(module.partition(".")[0])
    # Peel off the modules whose imports are all peeled; what remains holds a cycle.
    done: set[str] = set(MODULES) - set(graph)
    remaining = dict(graph)
    while remaining:
        ready = [m for m, deps in remaining.items() if deps <= done]
        assert ready, f"an import cycle among {sorted(remaining)}"
        for m in ready:
            done.add(m)
            del remaining[m]


def test_init_only_reexports():
    tree = ast.parse(Path(colflow.__file__).read_text(encoding="utf-8"))
    defined = [getattr(node, "name", "lambda") for node in ast.walk(tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                    ast.Lambda))]
    assert defined == [], f"__init__.py defines {defined}"
    for k, node in enumerate(tree.body):
        if k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1 and node.module, "__init__.py imports from its own modules"
            continue
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        assert names and set(names) <= {"__all__", "__version__"}, (
            f"__init__.py line {node.lineno}: only imports, __all__ and __version__")
    assert len(set(colflow.__all__)) == len(colflow.__all__)
    for name in colflow.__all__:
        module = getattr(colflow, name).__module__
        assert module.startswith("colflow._"), f"colflow.{name} is defined in {module}"
