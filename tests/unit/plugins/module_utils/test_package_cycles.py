"""The packages of plugins/module_utils import one another in one direction:
no import cycle between packages, and nothing imports adapter/, the top
layer. Every import statement counts wherever it stands, a function-level
import too (Ansible's dependency finder ships what it names the same way),
so a cycle cannot hide inside a function. A failure names the cycle and the
import statements that make it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

from support.paths import ROOT

from ansible_collections.lcm.openstack.plugins.module_utils.site.graph import find_cycle

UTILS = ROOT / "plugins" / "module_utils"
PREFIX = "ansible_collections.lcm.openstack.plugins.module_utils"
TOP = "adapter"

# package -> package it imports -> where ("kube/lease.py:12"), for each such import
Imports = Dict[str, Dict[str, List[str]]]


def _named(node: ast.AST) -> List[str]:
    """The dotted names below module_utils an import statement reaches: the
    module, and for `from x import y` each x.y (y may be a module)."""
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        base = node.module
        names = [base] + [f"{base}.{a.name}" for a in node.names]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        return []
    return [n[len(PREFIX) + 1:] for n in names if n.startswith(PREFIX + ".")]


def package_imports(root: Path) -> Imports:
    """Each package under `root` with the other packages its files import."""
    out: Imports = {p.name: {} for p in sorted(root.iterdir()) if (p / "__init__.py").is_file()}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if len(rel.parts) < 2:
            continue
        package = rel.parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _named(node):
                target = name.split(".")[0]
                if target != package and target in out:
                    sites = out[package].setdefault(target, [])
                    site = f"{rel}:{node.lineno}"
                    if site not in sites:
                        sites.append(site)
    return out


def cycle_of(imports: Imports) -> str:
    """One cycle between packages with the imports that make it, or ''."""
    cycle = find_cycle({p: sorted(targets) for p, targets in imports.items()})
    return "; ".join(f"{a} imports {b} ({', '.join(imports[a][b])})" for a, b in zip(cycle, cycle[1:]))


def _tree(root: Path, files: Dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    return root


def test_no_import_cycle_between_module_utils_packages() -> None:
    imports = package_imports(UTILS)
    assert {"adapter", "common", "kube", "lifecycle", "phase"} <= set(imports)
    assert cycle_of(imports) == ""


def test_nothing_imports_the_adapter_layer() -> None:
    imports = package_imports(UTILS)
    assert {p: targets[TOP] for p, targets in imports.items() if TOP in targets} == {}


def test_the_adapter_layer_is_seen_importing_the_engine() -> None:
    """The walk finds what is there: the adapter calls into the engine packages."""
    assert {"common", "kube", "lifecycle", "phase", "traffic"} <= set(package_imports(UTILS)[TOP])


def test_a_cycle_through_a_function_level_import_is_found_and_named(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/lease.py": "def keep():\n    from ansible_collections.lcm.openstack.plugins.module_utils.high.flow import Flow\n",
        "high/flow.py": f"from {PREFIX}.low import lease\nfrom {PREFIX}.high.other import x\n",
        "high/other.py": "x = 1\n",
    })
    imports = package_imports(root)
    assert imports == {"high": {"low": ["high/flow.py:1"]}, "low": {"high": ["low/lease.py:2"]}}
    assert cycle_of(imports) == "high imports low (high/flow.py:1); low imports high (low/lease.py:2)"


def test_a_longer_cycle_is_named_link_by_link_and_plain_imports_count(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "a/one.py": f"import {PREFIX}.b.two as two\n",
        "b/two.py": f"from {PREFIX} import c\n",  # a package imported by name
        "c/three.py": f"from {PREFIX}.a.one import thing\n",
        "d/four.py": f"from {PREFIX}.a import one\n",
    })
    assert cycle_of(package_imports(root)) == (
        "a imports b (a/one.py:1); b imports c (b/two.py:1); c imports a (c/three.py:1)")


def test_imports_in_one_direction_are_no_cycle(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/base.py": "import json\n",
        "mid/use.py": f"from {PREFIX}.low.base import json\n",
        "high/top.py": f"from {PREFIX}.mid import use\nfrom {PREFIX}.low import base\n",
    })
    imports = package_imports(root)
    targets: Set[str] = set(imports["high"])
    assert targets == {"low", "mid"} and cycle_of(imports) == ""
