"""plugins/module_utils/common/process_end.py: a module process ends with its
heap frozen, so the interpreter's last collection has nothing to walk; the
handler is registered once, and runs before those registered earlier."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import process_end

ENDING = """
import atexit, gc
atexit.register(lambda: print("frozen at the end:", gc.get_freeze_count() > 0))
from ansible_collections.lcm.openstack.plugins.module_utils.common.process_end import freeze_heap_at_exit
freeze_heap_at_exit()
print("frozen before the end:", gc.get_freeze_count() > 0)
"""


def test_the_heap_is_frozen_when_the_process_ends_not_before() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-c", ENDING], capture_output=True, text=True, env=env, check=True)
    # The handler registered earlier (as Ansible's are) runs after the freeze.
    assert run.stdout.splitlines() == ["frozen before the end: False", "frozen at the end: True"]


def test_the_freeze_is_registered_once_however_often_a_run_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: List[Any] = []
    monkeypatch.setattr(process_end, "_registered", [])
    monkeypatch.setattr(process_end.atexit, "register", registered.append)
    process_end.freeze_heap_at_exit()
    process_end.freeze_heap_at_exit()
    assert registered == [process_end.gc.freeze]
