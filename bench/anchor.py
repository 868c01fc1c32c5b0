"""Another revision of the collection beside this tree, for side-by-side
measurements: checked out in a scratch git worktree laid out as
ansible_collections/lcm/openstack, so Python (sys.path) and Ansible
(ANSIBLE_COLLECTIONS_PATH) load it instead of this tree."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, Iterator

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
