"""What each module ships. Ansible sends a module with every module_utils
file its imports reach, following each import statement wherever it stands
(a function-level import too), as its dependency finder does; this follows
them the same way. A module then ships its own adapter and the engine it
calls, not every other module's."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional, Set

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / "plugins" / "modules"
UTILS = ROOT / "plugins" / "module_utils"
PREFIX = "ansible_collections.lcm.openstack.plugins.module_utils"


def _source(dotted: str) -> Optional[Path]:
    rel = dotted[len(PREFIX):].lstrip(".").replace(".", "/")
    for candidate in (UTILS / f"{rel}.py", UTILS / rel / "__init__.py"):
        if rel and candidate.exists():
            return candidate
    return None


def _imports(path: Path) -> Set[Path]:
    found: Set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith(PREFIX)]
        found.update(p for p in map(_source, names) if p is not None)
    return found


def payload(module: str) -> Set[Path]:
    seen: Set[Path] = set()
    todo = list(_imports(MODULES / f"{module}.py"))
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(_imports(path))
    return seen


def _lines(paths: Set[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def _names(paths: Set[Path]) -> Set[str]:
    return {str(p.relative_to(UTILS)) for p in paths}


def test_phase_info_ships_a_small_part_of_the_collection() -> None:
    everything = set(UTILS.rglob("*.py"))
    shipped = payload("phase_info")
    assert _lines(shipped) * 4 < _lines(everything), sorted(_names(shipped))
    assert not _names(shipped) & {"phase.py", "apply.py", "helm_release.py", "traffic.py", "waiter.py"}


@pytest.mark.parametrize("module, not_shipped", [
    ("helm_release_info", {"phase.py", "traffic.py", "helm_release.py", "update_status.py"}),
    ("helm_release", {"phase.py", "traffic.py", "update_status.py", "info.py"}),
    ("service_lifecycle", {"phase.py", "traffic.py", "helm_release.py", "update_status.py"}),
    ("update_status", {"phase.py", "traffic.py", "helm_release.py"}),
    ("phase", {"helm_release.py", "adapter/traffic.py", "adapter/helm_release.py"}),
])
def test_a_module_does_not_ship_the_other_modules_engines(module: str, not_shipped: Set[str]) -> None:
    assert not _names(payload(module)) & not_shipped


def test_only_the_adapters_import_ansible() -> None:
    """The engine is tested without Ansible: only adapter/ imports it or kubernetes.core."""
    offenders = []
    for path in UTILS.rglob("*.py"):
        if path.parent.name == "adapter":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n == "ansible" or n.startswith(("ansible.", "ansible_collections.kubernetes")) for n in names):
                offenders.append(str(path.relative_to(UTILS)))
    assert offenders == []
