"""Make the collection importable as ansible_collections.lcm.openstack.

The checkout is linked into build/collections (what `make collection` does),
so the tests import the modules by the same names Ansible uses."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = ROOT / "build" / "collections"
LINK = COLLECTIONS / "ansible_collections" / "lcm" / "openstack"

if not LINK.exists():
    LINK.parent.mkdir(parents=True, exist_ok=True)
    LINK.symlink_to(ROOT)
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))
    importlib.invalidate_caches()
