# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: lifecycle_summary
type: aggregate
short_description: Show each lifecycle phase as it starts and ends, and a table of them when the run ends
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Follows the tasks that run C(lcm.openstack.phase) or C(lcm.openstack.traffic)
    (also by their short names, through the C(collections) keyword), beside
    whichever stdout callback is in use.
  - As such a task starts, prints one line naming the service and the phase type,
    and as it ends, one line with the result, how long the phase took and its
    C(Phase) resource, or why it failed. A person watching a long upgrade sees
    where it is.
  - When the playbook run ends, prints one table per service (namespace and
    service) with each phase the run met, in order, with its result, its
    duration and its C(Phase) resource. A phase that an earlier run had
    completed already (the module changed nothing and the Phase is Succeeded)
    reads V(Succeeded (earlier run\)); traffic that was where it should be
    already, so that no Phase was created, reads V(in place).
  - Prints nothing when no such task ran.
requirements:
  - enable it in callbacks_enabled
options:
  show_progress:
    description:
      - Print a line as each phase or traffic task starts and ends.
      - The table at the end of the run is printed either way.
    type: bool
    default: true
    env:
      - name: LCM_LIFECYCLE_SUMMARY_PROGRESS
    ini:
      - section: callback_lcm_lifecycle_summary
        key: show_progress
"""

EXAMPLES = r"""
# Beside the default stdout callback, for one run:
#   ANSIBLE_CALLBACKS_ENABLED=lcm.openstack.lifecycle_summary ansible-playbook playbooks/update.yml ...
#
# Or in ansible.cfg:
#   [defaults]
#   callbacks_enabled = lcm.openstack.lifecycle_summary
#
#   [callback_lcm_lifecycle_summary]
#   # only the table at the end, no line per phase
#   show_progress = false
"""

import time
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ansible.errors import AnsibleError
from ansible.plugins.callback import CallbackBase
from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned, widths
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration_or_dash

PHASE = "lcm.openstack.phase"
TRAFFIC = "lcm.openstack.traffic"
ACTIONS = {PHASE: PHASE, TRAFFIC: TRAFFIC, "phase": PHASE, "traffic": TRAFFIC}
HEADER = ("PHASE", "RESULT", "DURATION", "PHASE RESOURCE")
EARLIER_RUN = "Succeeded (earlier run)"
IN_PLACE = "in place"


class Row(NamedTuple):
    """One phase task's result, as a line of its service's table."""

    namespace: str
    service: str
    type: str
    result: str
    duration: Optional[int]
    name: str
    message: str = ""


# Pure functions: no Ansible objects in, text out.

def is_template(value: Any) -> bool:
    """Whether a raw task argument still has to be templated."""
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def literal(value: Any) -> Optional[str]:
    """A raw task argument as text, or None when it is a template or not a plain value."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and not is_template(value):
        return str(value)
    return None


def format_duration(seconds: Optional[Any]) -> str:
    """6s, 1m04s, or - when unknown (timefmt, as the flow summary says it)."""
    return duration_or_dash(seconds)


def phase_type(action: str, args: Mapping[str, Any]) -> Optional[str]:
    """The phase type a task runs, from its arguments (None when they are templates)."""
    if action == TRAFFIC:
        traffic = literal(args.get("action"))
        return f"traffic{traffic}" if traffic else None
    return literal(args.get("type"))


def one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def row_from_result(action: str, result: Mapping[str, Any], failed: bool = False,
                    args: Optional[Mapping[str, Any]] = None) -> Optional[Row]:
    """The table row of one result of an lcm.openstack.phase or lcm.openstack.traffic task.

    The service, namespace and type come from the returned Phase; without one,
    from the module's arguments as it ran (the result's invocation), else from
    `args`, the task's raw arguments where they are not templates. None when the
    result says nothing about a phase (skipped, or a success with no service known).
    """
    if not isinstance(result, Mapping) or result.get("skipped"):
        return None
    invocation = result.get("invocation")
    module_args = invocation.get("module_args") if isinstance(invocation, Mapping) else None
    known: Dict[str, Any] = dict(args or {})
    if isinstance(module_args, Mapping):
        known.update(module_args)
    phase = result.get("phase")
    phase = phase if isinstance(phase, Mapping) else {}
    namespace = phase.get("namespace") or literal(known.get("namespace")) or ""
    service = phase.get("service") or literal(known.get("service")) or literal(known.get("release"))
    ptype = phase.get("type") or phase_type(action, known)
    message = one_line(phase.get("message") or result.get("msg") or result.get("message") or "")
    changed = bool(result.get("changed"))
    failed = failed or bool(result.get("failed"))
    if not service:
        if not failed:
            return None
        service = "?"
    ptype = ptype or ("traffic" if action == TRAFFIC else "phase")
    if failed:
        message = one_line(result.get("msg") or message)
        return Row(namespace, service, ptype, "Failed", phase.get("duration_seconds"), phase.get("name") or "-",
                   message)
    if phase:
        state = phase.get("state") or "Pending"
        if state == "Succeeded" and not changed:
            state = EARLIER_RUN
        return Row(namespace, service, ptype, state, phase.get("duration_seconds"), phase.get("name") or "-",
                   message)
    if "deleted" in result:
        deleted = [str(n) for n in result.get("deleted") or []]
        return Row(namespace, service, ptype, "deleted" if deleted else "none to delete", None,
                   ", ".join(deleted) or "-", "")
    if action == TRAFFIC and not changed:
        return Row(namespace, service, ptype, IN_PLACE, None, "-", message)
    return Row(namespace, service, ptype, "changed" if changed else "ok", None, "-", message)


def format_tables(rows: Sequence[Row]) -> str:
    """One table per service (in the order the services first appear), or '' for no rows."""
    if not rows:
        return ""
    services: Dict[Tuple[str, str], List[Row]] = {}
    for row in rows:
        services.setdefault((row.namespace, row.service), []).append(row)
    cells = [(r.type, r.result, format_duration(r.duration), r.name) for r in rows]
    same = widths([HEADER] + cells)  # the services' tables line up as one

    blocks = []
    for (namespace, service), own in services.items():
        lines = [f"{service} ({namespace})" if namespace else service]
        lines += aligned([HEADER] + [(r.type, r.result, format_duration(r.duration), r.name) for r in own], same)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def clock_stamp(now: Optional[float] = None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(now))


def task_label(action: str, args: Mapping[str, Any]) -> str:
    """What a task is about to do, from the arguments that are not templates: keystone: upgrade phase."""
    service = literal(args.get("service"))
    ptype = phase_type(action, args)
    what = f"{ptype} phase" if ptype else ("traffic" if action == TRAFFIC else "phase")
    return f"{service}: {what}" if service else what


def start_line(stamp: str, action: str, task_name: str, args: Mapping[str, Any]) -> str:
    """The line printed as a phase or traffic task starts."""
    return f"[lifecycle {stamp}] {task_label(action, args)} starting (task: {task_name})"


def skipped_line(stamp: str, action: str, task_name: str, args: Mapping[str, Any]) -> str:
    """The line printed when a phase or traffic task that was announced is skipped."""
    return f"[lifecycle {stamp}] {task_label(action, args)} skipped (task: {task_name})"


def end_line(stamp: str, row: Row) -> str:
    """The line printed as a phase or traffic task ends."""
    head = f"[lifecycle {stamp}] {row.service}: {row.type}"
    phase = f" (Phase {row.name})" if row.name != "-" else ""
    if row.result == "Failed":
        took = f" in {format_duration(row.duration)}" if row.duration is not None else ""
        return f"{head} Failed{took}: {row.message or 'no message'}{phase}"
    if row.result == EARLIER_RUN:
        return f"{head} Succeeded in an earlier run{phase}"
    if row.result == IN_PLACE:
        return f"{head} in place, nothing to change" + (f": {row.message}" if row.message else "")
    if row.result == "Succeeded":
        return f"{head} Succeeded in {format_duration(row.duration)}{phase}"
    if row.result in ("deleted", "none to delete"):
        return f"{head} {row.result}" + (f": {row.name}" if row.name != "-" else "")
    return f"{head} {row.result}{phase}" + (f": {row.message}" if row.message else "")


def resolve_action(task: Any) -> Optional[str]:
    """lcm.openstack.phase or lcm.openstack.traffic when the task runs one of them, else None."""
    action = getattr(task, "action", None)
    if not isinstance(action, str) or is_template(action):
        return None
    # Not read for a templated action: Ansible warns when it cannot resolve one.
    try:
        resolved = getattr(task, "resolved_action", None)
    except AnsibleError:
        resolved = None
    if isinstance(resolved, str) and resolved:
        return resolved if resolved in (PHASE, TRAFFIC) else None
    return ACTIONS.get(action)


def _parts(result: Any) -> Tuple[Any, Any, Mapping[str, Any]]:
    """Task, host and result dict of a callback's task result (ansible-core 2.19 names, or the older ones)."""
    task = getattr(result, "task", None) or getattr(result, "_task", None)
    host = getattr(result, "host", None) or getattr(result, "_host", None)
    data = getattr(result, "result", None)
    if not isinstance(data, Mapping):
        data = getattr(result, "_result", None)
    return task, host, data if isinstance(data, Mapping) else {}


def _raw_args(task: Any) -> Mapping[str, Any]:
    args = getattr(task, "args", None)
    return args if isinstance(args, Mapping) else {}


def _task_name(task: Any) -> str:
    name = getattr(task, "name", None)
    if isinstance(name, str) and name and not is_template(name):
        return name
    get_name = getattr(task, "get_name", None)
    return str(get_name()) if callable(get_name) else str(getattr(task, "action", "") or "")


class CallbackModule(CallbackBase):
    """Progress lines and a per-service table of the phases a playbook run met."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "lcm.openstack.lifecycle_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, clock: Callable[[], str] = clock_stamp, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows: List[Row] = []
        self._clock = clock

    def _progress(self) -> bool:
        return bool(self.get_option("show_progress"))

    def v2_playbook_on_task_start(self, task: Any, is_conditional: Any) -> None:
        action = resolve_action(task)
        if action is None:
            return
        if self._progress():
            self._display.display(start_line(self._clock(), action, _task_name(task), _raw_args(task)))

    def _record(self, result: Any, failed: bool) -> None:
        task, _host, data = _parts(result)
        action = resolve_action(task)
        if action is None:
            return
        items = data.get("results") if isinstance(data.get("results"), list) else [data]
        for item in items:
            row = row_from_result(action, item, failed=failed and len(items) == 1, args=_raw_args(task))
            if row is None:
                continue
            self.rows.append(row)
            if self._progress():
                self._display.display(end_line(self._clock(), row))

    def v2_runner_on_ok(self, result: Any) -> None:
        self._record(result, failed=False)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._record(result, failed=True)

    def v2_runner_on_skipped(self, result: Any) -> None:
        task, _host, _data = _parts(result)
        action = resolve_action(task)
        if action is not None and self._progress():
            self._display.display(skipped_line(self._clock(), action, _task_name(task), _raw_args(task)))

    def v2_playbook_on_stats(self, stats: Any) -> None:
        text = format_tables(self.rows)
        if not text:
            return
        self._display.banner("LIFECYCLE SUMMARY")
        self._display.display(text)
