"""docs/design.md's package map is the tree: one row per package of
plugins/module_utils, and every file a row names is in that package."""

from __future__ import annotations

import re
from typing import Dict, List

from support.paths import ROOT

UTILS = ROOT / "plugins" / "module_utils"
ROW = re.compile(r"^\| `(?P<package>[a-z_]+)/` \| (?P<text>.*) \|$")


def _rows(text: str) -> Dict[str, List[str]]:
    """Each row's package and the .py files it names."""
    rows = {}
    for line in text.splitlines():
        found = ROW.match(line)
        if found:
            rows[found["package"]] = re.findall(r"`([a-z_/]+\.py)`", found["text"])
    return rows


def _problems(rows: Dict[str, List[str]]) -> List[str]:
    packages = {p.name for p in UTILS.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    problems = [f"package {p}/ has no row" for p in sorted(packages - set(rows))]
    problems += [f"row {p}/ names no package" for p in sorted(set(rows) - packages)]
    problems += [f"row {p}/ names {f}, which is not there" for p, files in sorted(rows.items()) if p in packages
                 for f in files if not (UTILS / p / f).exists() and not (UTILS / f).exists()]
    return problems


def test_the_package_map_is_the_tree() -> None:
    assert _problems(_rows((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))) == []


def test_a_map_that_is_not_the_tree_is_named() -> None:
    rows = _rows("| `kube/` | the waiter (`waiter.py`), the gone (`nowhere.py`) |\n| `ghost/` | nothing |\n")
    problems = _problems(rows)
    assert "row ghost/ names no package" in problems
    assert "row kube/ names nowhere.py, which is not there" in problems
    assert "package phase/ has no row" in problems
    assert not any("waiter.py" in p for p in problems)
