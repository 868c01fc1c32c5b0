# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin every module of the collection runs under: it runs the
module as Ansible's own `normal` action does, and builds the module's payload
with Python's cyclic garbage collector paused.

Why: before a module runs, Ansible builds its payload in the worker process,
parsing every module_utils file the module's imports reach (one AST each,
some 160 files for lcm.openstack.phase). Those allocations trigger the
collector's full passes over the worker's heap, which holds the whole play:
measured, they are half the build (lcm.openstack.phase 370 ms with the
collector, 180 ms without; kubernetes.core.k8s 190 / 90 ms). An AST is a
tree freed by reference counting, so pausing the collector for the build
leaks nothing; its state is put back as it was, whatever the build raises.
Ansible keeps the payload for the rest of the run (once per module and
playbook), so a flow pays the build once per module, an ad hoc call each
time.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, then as it was."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class ModuleAction(ActionBase):
    """Run the module of the task, as `normal` does."""

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp: Any = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect
        wrap_async = bool(self._task.async_val) and not self._connection.has_native_async
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
