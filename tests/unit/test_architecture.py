"""The shape of the code: the rules engine is reached through its public API only, and its
modules (one per RULES.md section, docs/architecture.md) import each other in one
direction.

Both read the syntax tree of every module, so an import inside a function or under
``TYPE_CHECKING`` counts too. Tests may import rules submodules: they test the parts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import services.rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "services" / "rules"
SUBMODULES = {p.stem for p in RULES.glob("*.py") if p.stem != "__init__"}


def _imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """Every import of a module: line, imported module, names taken from it."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module, [alias.name for alias in node.names]


def test_no_module_outside_rules_imports_a_rules_submodule() -> None:
    found = []
    for top in ("services", "schemas"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if RULES in path.parents:
                continue
            for line, module, names in _imports(path):
                where = f"{path.relative_to(ROOT)}:{line}"
                if module.startswith("services.rules."):
                    found.append(f"{where} imports {module}")
                elif module == "services.rules":
                    found.extend(f"{where} imports the module {n}" for n in names if _module(n))
    assert found == [], "\n".join(["import from services.rules, its API:", *found])


def _module(name: str) -> bool:
    """Whether ``from services.rules import name`` takes a submodule, not something it exports."""
    return isinstance(getattr(services.rules, name, None), ModuleType) or (
        name in SUBMODULES and not hasattr(services.rules, name)
    )


def _rules_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name in sorted(SUBMODULES):
        deps = graph.setdefault(name, set())
        for _, module, names in _imports(RULES / f"{name}.py"):
            if module.startswith("services.rules."):
                deps.add(module.removeprefix("services.rules.").split(".")[0])
            elif module == "services.rules":
                deps.update(n for n in names if n in SUBMODULES)
    return graph


def test_the_rules_modules_import_each_other_without_a_cycle() -> None:
    graph = _rules_graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = [*path[path.index(name) :], name]
            raise AssertionError("import cycle in services/rules: " + " → ".join(cycle))
        if name in done:
            return
        for dep in sorted(graph.get(name, ())):
            visit(dep, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_the_public_api_exports_what_it_names_and_no_module() -> None:
    names = services.rules.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(services.rules, name), name
        assert not _module(name), f"{name} is a module: export what services need from it"
