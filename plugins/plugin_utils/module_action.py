# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin every module of the collection runs under: it runs the
module as Ansible's own `normal` action does, and builds the module's payload
without Python's cyclic garbage collector.

Why: before a module runs, Ansible builds its payload in the task's worker
process, parsing every module_utils file the module's imports reach (one AST
each, some 160 files for lcm.openstack.phase). Those allocations trigger the
collector's passes over the worker's heap, which holds the whole play, again
and again: measured in the worker, the build of lcm.openstack.phase took
0.39 to 0.44 s with the collector, 0.21 s without (kubernetes.core.k8s: 0.21 s
with it). So the collector is off for the build; after it, what is alive is
frozen (gc.freeze: left out of later collections) before the collector is
back on, or its first pass would walk the build's leftovers and the heap at
once (measured: 60 to 80 ms). The run unfreezes at its end, unless something
else had frozen objects before it. Nothing is leaked: the parser's trees are
freed by reference counting; a cycle among frozen objects waits for the
unfreeze, at the end of the task. Ansible keeps a built payload for the rest
of its process, so a playbook pays each module's build once and an ad hoc
call every time.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block; then what is alive
    frozen, and the collector back on if it was."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()


@contextmanager
def unfrozen_at_the_end() -> Iterator[None]:
    """What collector_paused() froze in the block unfrozen after it, unless
    objects were frozen before it (by someone else: theirs stay so)."""
    ours = gc.get_freeze_count() == 0
    try:
        yield
    finally:
        if ours:
            gc.unfreeze()


class ModuleAction(ActionBase):
    """Run the module of the task, as `normal` does."""

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp: Any = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect
        wrap_async = bool(self._task.async_val) and not self._connection.has_native_async
        with unfrozen_at_the_end():
            result = merge_hash(result, self._run_module(task_vars, wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _run_module(self, task_vars: Optional[Dict[str, Any]], wrap_async: bool) -> Dict[str, Any]:
        """The module's result; ProgressAction shows its lines meanwhile."""
        return self._execute_module(task_vars=task_vars, wrap_async=wrap_async)

    def _configure_module(self, module_name: str, module_args: Any, task_vars: Any) -> Any:
        with collector_paused():
            return super()._configure_module(module_name, module_args, task_vars)
