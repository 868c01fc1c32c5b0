"""Another revision of the collection beside this tree, for side-by-side
measurements: checked out in a scratch git worktree laid out as
ansible_collections/lcm/openstack, so Python (sys.path) and Ansible
(ANSIBLE_COLLECTIONS_PATH) load it instead of this tree."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
THIS_TREE = "this tree"


@contextlib.contextmanager
def trees(anchor: str) -> Iterator[Dict[str, Path]]:
    """{label: collections path}: this tree, and the anchor revision when one is given."""
    found = {THIS_TREE: ROOT / "build" / "collections"}
    if not anchor:
        yield found
        return
    scratch = Path(tempfile.mkdtemp(prefix="lcm-anchor-"))
    target = scratch / "ansible_collections" / "lcm" / "openstack"
    target.parent.mkdir(parents=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), anchor],
                   check=True, capture_output=True)
    try:
        yield dict(found, **{anchor: scratch})
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(target)], check=False)


def rotated(items: list, turn: int) -> list:
    """`items` starting at position turn: interleaved runs take turns going first."""
    turn %= len(items)
    return items[turn:] + items[:turn]


def side_by_side_args(doc: str, runs: int) -> argparse.ArgumentParser:
    """The options every side-by-side bench takes (--anchor, --runs, --json);
    the caller adds its own and parses."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--anchor", default="", help="a revision to measure beside this tree")
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--json", default="", help="write every run's numbers here")
    return parser


def kubeconfig() -> str:
    """The cluster measured: $KUBECONFIG, else the bed's."""
    return os.environ.get("KUBECONFIG") or str(ROOT / ".cluster" / "kubeconfig")


def bench_site() -> Any:
    """bench/site.py's readings, loaded once by path: its module name is the
    standard library's too, so it cannot be imported by name."""
    global _SITE  # pylint: disable=global-statement
    if _SITE is None:
        import importlib.util  # pylint: disable=import-outside-toplevel
        spec = importlib.util.spec_from_file_location("bench_site", Path(__file__).resolve().parent / "site.py")
        _SITE = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_SITE)
    return _SITE


_SITE: Optional[Any] = None
