# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of the collection's modules that wait: it runs the module
as Ansible's own `normal` action would, and shows the module's progress lines
as they arrive, one display line each, prefixed with the host.

A module returns only when it ends, so the lines come over a private Unix
socket (module_utils/progress/channel.py) whose path the module finds in its
environment (module_utils/progress/emitter.py). Display calls made in the
worker process reach the controller's main process through Ansible's result
queue, in order with the task's result: the terminal, and ansible-runner
(AWX's job events), get them as they happen. Only with a local connection
(the module runs on this machine, as the flows run it); elsewhere the module
runs as it always did, and says nothing.

The lines go to stdout, or to stderr when the stdout callback prints JSON
(its output stays a document a program can parse); LCM_PROGRESS=off on the
controller turns them off (no channel is opened).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ansible import constants as C
from ansible.utils.display import Display
from ansible_collections.lcm.openstack.plugins.module_utils.progress.channel import Channel
from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import ENV
from ansible_collections.lcm.openstack.plugins.plugin_utils.module_action import ModuleAction

display = Display()
# Stdout callbacks whose output is a document: the lines go to stderr beside them.
DOCUMENT_CALLBACKS = ("json", "jsonl")
SWITCH = "LCM_PROGRESS"


class ProgressAction(ModuleAction):
    """Run the module of the task; show its progress lines while it runs."""

    _progress_path: Optional[str] = None

    def _run_module(self, task_vars: Optional[Dict[str, Any]], wrap_async: bool) -> Dict[str, Any]:
        if wrap_async or getattr(self._connection, "transport", "") != "local" or \
                os.environ.get(SWITCH, "").lower() in ("off", "0", "false", "no"):
            return super()._run_module(task_vars, wrap_async)
        host = (task_vars or {}).get("inventory_hostname") or self._play_context.remote_addr or "localhost"
        stderr = _document_callback()
        with Channel(lambda text, level: _show(host, text, level, stderr)) as path:
            self._progress_path = path
            try:
                return self._execute_module(task_vars=task_vars)
            finally:
                self._progress_path = None

    def _compute_environment_string(self, raw_environment_out: Optional[Dict[str, Any]] = None) -> str:
        """The task's environment, and the channel's path while the module runs."""
        if self._progress_path is None:
            return super()._compute_environment_string(raw_environment_out)
        env: Dict[str, Any] = {}
        super()._compute_environment_string(env)
        env[ENV] = self._progress_path
        if isinstance(raw_environment_out, dict):
            raw_environment_out.clear()
            raw_environment_out.update(env)
        return self._connection._shell.env_prefix(**env)


def _document_callback() -> bool:
    name = str(C.config.get_config_value("DEFAULT_STDOUT_CALLBACK") or "")
    return name.rsplit(".", 1)[-1] in DOCUMENT_CALLBACKS


def _show(host: str, text: str, level: int, stderr: bool = False) -> None:
    """One line, when the run's verbosity reaches its level (0: always, 1: -v)."""
    if display.verbosity >= level:
        display.display(f"[{host}] {text}", stderr=stderr)
