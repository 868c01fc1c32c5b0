"""plugins/callback/lifecycle_summary.py: the progress lines and the per-service table, from task
results shaped as the modules return them (tests/unit/fixtures/lifecycle_summary/results.yaml),
handed to the callback in stand-ins for Ansible's task and task result."""

from __future__ import annotations

import copy
import itertools
from typing import Any, Dict, List, Optional

import pytest
import yaml
from ansible.errors import AnsibleError

from ansible_collections.lcm.openstack.plugins.callback import lifecycle_summary as ls
from support.paths import UNIT_FIXTURES

RESULTS = yaml.safe_load((UNIT_FIXTURES / "lifecycle_summary" / "results.yaml").read_text())
PHASE_ARGS = {"type": "install", "service": "keystone", "namespace": "openstack"}
UUIDS = itertools.count(1)


def result(name: str) -> Dict[str, Any]:
    return copy.deepcopy(RESULTS[name])


# -- stand-ins for what Ansible hands a callback ------------------------------------------------

class FakeTask:
    """The parts of ansible.playbook.task.Task the callback reads."""

    def __init__(self, action: str, args: Optional[Dict[str, Any]] = None, name: str = "",
                 resolved: Optional[str] = None, role: str = "") -> None:
        self.action = action
        self.args = args or {}
        self.name = name
        self._resolved = resolved
        self._role = role
        self._uuid = f"uuid-{next(UUIDS)}"

    @property
    def resolved_action(self) -> Optional[str]:
        return self._resolved

    def get_name(self) -> str:
        base = self.name or self.action
        return f"{self._role} : {base}" if self._role else base


class FakeHost:
    def get_name(self) -> str:
        return "localhost"


class FakeResult:
    """The pre-2.19 names of a callback task result, which 2.19 still answers to."""

    def __init__(self, task: FakeTask, data: Dict[str, Any]) -> None:
        self._task = task
        self._result = data
        self._host = FakeHost()


class FakeDisplay:
    verbosity = 0

    def __init__(self) -> None:
        self.lines: List[str] = []

    def display(self, msg: str, **_: Any) -> None:
        self.lines.extend(msg.split("\n"))

    def banner(self, msg: str, **_: Any) -> None:
        self.lines.append(f"{msg} ***")


def callback(show_progress: bool = True) -> ls.CallbackModule:
    cb = ls.CallbackModule(display=FakeDisplay(), clock=lambda: "04:31:07")
    # What Ansible's plugin loader sets from the DOCUMENTATION options.
    cb._plugin_options = {"show_progress": show_progress}
    return cb


def lines(cb: ls.CallbackModule) -> List[str]:
    return cb._display.lines


def run(cb: ls.CallbackModule, task: FakeTask, data: Dict[str, Any], failed: bool = False) -> None:
    """One task as Ansible reports it: started, then ok or failed."""
    cb.v2_playbook_on_task_start(task, is_conditional=False)
    if failed:
        cb.v2_runner_on_failed(FakeResult(task, data), ignore_errors=False)
    else:
        cb.v2_runner_on_ok(FakeResult(task, data))


def phase_task(**kw: Any) -> FakeTask:
    args = dict(PHASE_ARGS, **kw.pop("args", {}))
    return FakeTask(kw.pop("action", "lcm.openstack.phase"), args, **kw)


# -- pure functions -----------------------------------------------------------------------------

@pytest.mark.parametrize("seconds, text", [
    (None, "-"), (0, "0s"), (6, "6s"), (59, "59s"), (60, "1m00s"), (64, "1m04s"), (612, "10m12s"),
    ("7", "7s"), ("soon", "-"), (True, "-"),
])
def test_durations_read_like_the_flow_summary(seconds: Any, text: str) -> None:
    assert ls.format_duration(seconds) == text


def test_rows_from_each_kind_of_result() -> None:
    p, t = ls.PHASE, ls.TRAFFIC
    assert ls.row_from_result(p, result("install_succeeded")) == ls.Row(
        "openstack", "keystone", "install", "Succeeded", 64, "keystone-install-6beab32d",
        "17 object(s) Current in 64s")
    assert ls.row_from_result(p, result("install_earlier_run"))[3:6] == (
        "Succeeded (earlier run)", 64, "keystone-install-6beab32d")
    failed = ls.row_from_result(p, result("test_failed"), failed=True)
    assert failed[:6] == ("openstack", "keystone", "test", "Failed", 3, "keystone-test-9af20727")
    # The task's message, on one line.
    assert failed.message == ("Pod keystone-test failed: Error; container keystone-test exited 1 (Error): "
                              "identity tests: 12 of 12 failed")
    # No Phase: the service and type come from the module's arguments.
    assert ls.row_from_result(p, result("upgrade_refused"), failed=True)[:6] == (
        "openstack", "keystone", "upgrade", "Failed", None, "-")
    assert ls.row_from_result(t, result("drain_succeeded"))[2:6] == (
        "trafficdrain", "Succeeded", 0, "keystone-trafficdrain-f978b268")
    in_place = ls.row_from_result(t, result("rollout_in_place"))
    assert in_place[:6] == ("openstack", "keystone", "trafficrollout", "in place", None, "-")
    assert in_place.message == "Service keystone-api selects track=2025.1: 1 ready endpoint(s)"
    assert ls.row_from_result(p, result("install_check_mode"))[3:6] == ("Pending", None, "keystone-install-6beab32d")
    assert ls.row_from_result(p, result("install_absent"))[3:6] == ("deleted", None, "keystone-install-6beab32d")


def test_rows_take_the_service_from_the_task_when_the_result_has_no_invocation() -> None:
    data = result("rollout_in_place")
    del data["invocation"]
    row = ls.row_from_result(ls.TRAFFIC, data, args={"action": "rollout", "service": "keystone",
                                                     "namespace": "openstack"})
    assert row[:4] == ("openstack", "keystone", "trafficrollout", "in place")
    # Templates say nothing: a plain success without a service is no row; a failure is one.
    templated = {"action": "rollout", "service": "{{ svc }}", "namespace": "{{ ns }}"}
    assert ls.row_from_result(ls.TRAFFIC, data, args=templated) is None
    assert ls.row_from_result(ls.PHASE, {"failed": True, "msg": "boom"}, failed=True, args={"type": "{{ t }}"})[:4] \
        == ("", "?", "phase", "Failed")
    assert ls.row_from_result(ls.PHASE, {"skipped": True}, args=PHASE_ARGS) is None


def test_one_aligned_table_per_service_in_order_of_appearance() -> None:
    rows = [ls.row_from_result(ls.TRAFFIC, result("drain_succeeded")),
            ls.row_from_result(ls.PHASE, result("glance_install")),
            ls.row_from_result(ls.PHASE, result("test_failed"), failed=True),
            ls.row_from_result(ls.PHASE, result("install_earlier_run")),
            ls.row_from_result(ls.TRAFFIC, result("rollout_in_place"))]
    assert ls.format_tables(rows) == "\n".join([
        "keystone (openstack)",
        "PHASE           RESULT                   DURATION  PHASE RESOURCE",
        "trafficdrain    Succeeded                0s        keystone-trafficdrain-f978b268",
        "test            Failed                   3s        keystone-test-9af20727",
        "install         Succeeded (earlier run)  1m04s     keystone-install-6beab32d",
        "trafficrollout  in place                 -         -",
        "",
        "glance (openstack)",
        "PHASE           RESULT                   DURATION  PHASE RESOURCE",
        "install         Succeeded                7s        glance-install-0c1d2e3f",
    ])


def test_the_same_service_in_two_namespaces_gets_two_tables() -> None:
    other = result("glance_install")
    other["phase"].update(service="keystone", namespace="staging", name="keystone-install-11111111")
    text = ls.format_tables([ls.row_from_result(ls.PHASE, result("install_succeeded")),
                             ls.row_from_result(ls.PHASE, other)])
    assert [line for line in text.splitlines() if "(" in line] == ["keystone (openstack)", "keystone (staging)"]


def test_no_rows_no_table() -> None:
    assert ls.format_tables([]) == ""


def test_which_tasks_count() -> None:
    assert ls.resolve_action(FakeTask("lcm.openstack.phase")) == ls.PHASE
    assert ls.resolve_action(FakeTask("phase", resolved="lcm.openstack.phase")) == ls.PHASE
    assert ls.resolve_action(FakeTask("traffic", resolved="lcm.openstack.traffic")) == ls.TRAFFIC
    # Short names with nothing resolved yet: the collection's own modules.
    assert ls.resolve_action(FakeTask("traffic")) == ls.TRAFFIC
    # Another collection's module of the same short name, and everything else, do not.
    assert ls.resolve_action(FakeTask("phase", resolved="other.tools.phase")) is None
    assert ls.resolve_action(FakeTask("ansible.builtin.debug", resolved="ansible.builtin.debug")) is None
    assert ls.resolve_action(FakeTask("lcm.openstack.phase_info", resolved="lcm.openstack.phase_info")) is None
    assert ls.resolve_action(FakeTask("{{ module }}")) is None

    class Unresolvable(FakeTask):
        @property
        def resolved_action(self) -> Optional[str]:
            raise AnsibleError("Cannot resolve 'phase' to an action or module.")

    assert ls.resolve_action(Unresolvable("phase")) == ls.PHASE


# -- the callback, driven as Ansible drives it ---------------------------------------------------

def test_a_run_prints_a_line_per_phase_start_and_end_and_a_table_at_the_end() -> None:
    cb = callback()
    run(cb, phase_task(name="Run the install phase - keystone"), result("install_succeeded"))
    cb.v2_runner_on_ok(FakeResult(FakeTask("ansible.builtin.debug", {"msg": "hi"}), {"msg": "hi"}))
    # Role tasks: the arguments are templates at task start; the name was templated already.
    templated = phase_task(args={"type": "test", "service": "{{ test_service }}"},
                           name="Run the test phase - keystone", role="lcm.openstack.test")
    run(cb, templated, result("test_failed"), failed=True)
    run(cb, FakeTask("traffic", {"action": "rollout", "service": "keystone"}, name="Roll out",
                     resolved="lcm.openstack.traffic"), result("rollout_in_place"))
    run(cb, phase_task(name="Install glance", args={"service": "glance"}), result("glance_install"))
    assert lines(cb) == [
        "[lifecycle 04:31:07] keystone: install phase starting (task: Run the install phase - keystone)",
        "[lifecycle 04:31:07] keystone: install Succeeded in 1m04s (Phase keystone-install-6beab32d)",
        "[lifecycle 04:31:07] test phase starting (task: Run the test phase - keystone)",
        "[lifecycle 04:31:07] keystone: test Failed in 3s: Pod keystone-test failed: Error; container keystone-test "
        "exited 1 (Error): identity tests: 12 of 12 failed (Phase keystone-test-9af20727)",
        "[lifecycle 04:31:07] keystone: trafficrollout phase starting (task: Roll out)",
        "[lifecycle 04:31:07] keystone: trafficrollout in place, nothing to change: Service keystone-api selects "
        "track=2025.1: 1 ready endpoint(s)",
        "[lifecycle 04:31:07] glance: install phase starting (task: Install glance)",
        "[lifecycle 04:31:07] glance: install Succeeded in 7s (Phase glance-install-0c1d2e3f)",
    ]
    del lines(cb)[:]
    cb.v2_playbook_on_stats(stats=None)
    assert lines(cb) == [
        "LIFECYCLE SUMMARY ***",
        "keystone (openstack)",
        "PHASE           RESULT     DURATION  PHASE RESOURCE",
        "install         Succeeded  1m04s     keystone-install-6beab32d",
        "test            Failed     3s        keystone-test-9af20727",
        "trafficrollout  in place   -         -",
        "",
        "glance (openstack)",
        "PHASE           RESULT     DURATION  PHASE RESOURCE",
        "install         Succeeded  7s        glance-install-0c1d2e3f",
    ]


def test_a_rerun_reads_earlier_run() -> None:
    cb = callback()
    run(cb, phase_task(name="Install"), result("install_earlier_run"))
    assert lines(cb)[-1] == \
        "[lifecycle 04:31:07] keystone: install Succeeded in an earlier run (Phase keystone-install-6beab32d)"
    cb.v2_playbook_on_stats(stats=None)
    assert lines(cb)[-1] == "install  Succeeded (earlier run)  1m04s     keystone-install-6beab32d"


def test_a_failure_before_any_phase_is_a_row_and_a_line() -> None:
    cb = callback()
    run(cb, phase_task(name="Upgrade", args={"type": "upgrade"}), result("upgrade_refused"), failed=True)
    why = "Phase keystone-install-6beab32d (install) is Running for keystone; wait for it"
    assert lines(cb)[-1] == f"[lifecycle 04:31:07] keystone: upgrade Failed: {why}"
    assert cb.rows == [ls.Row("openstack", "keystone", "upgrade", "Failed", None, "-", why)]


def test_a_skipped_phase_task_says_so_and_adds_no_row() -> None:
    cb = callback()
    task = phase_task(name="Uninstall", args={"type": "uninstall"})
    cb.v2_playbook_on_task_start(task, is_conditional=True)
    cb.v2_runner_on_skipped(FakeResult(task, {"skipped": True, "changed": False}))
    assert lines(cb) == ["[lifecycle 04:31:07] keystone: uninstall phase starting (task: Uninstall)",
                         "[lifecycle 04:31:07] keystone: uninstall phase skipped (task: Uninstall)"]
    cb.v2_playbook_on_stats(stats=None)
    assert cb.rows == [] and len(lines(cb)) == 2


def test_a_looped_phase_task_gives_a_row_per_item() -> None:
    cb = callback(show_progress=False)
    task = phase_task(name="Install each", args={"service": "{{ item }}"})
    cb.v2_runner_on_ok(FakeResult(task, {"changed": True, "results": [
        result("install_succeeded"), result("glance_install"), {"skipped": True, "item": "nova"}]}))
    assert [(r.service, r.result) for r in cb.rows] == [("keystone", "Succeeded"), ("glance", "Succeeded")]


def test_nothing_ran_nothing_printed() -> None:
    cb = callback()
    task = FakeTask("ansible.builtin.debug", {"msg": "hello"}, name="Say hello", resolved="ansible.builtin.debug")
    run(cb, task, {"msg": "hello", "changed": False})
    cb.v2_playbook_on_stats(stats=None)
    assert lines(cb) == []


def test_without_progress_only_the_table() -> None:
    cb = callback(show_progress=False)
    run(cb, phase_task(name="Install"), result("install_succeeded"))
    run(cb, phase_task(name="Test", args={"type": "test"}), result("test_failed"), failed=True)
    assert lines(cb) == []
    cb.v2_playbook_on_stats(stats=None)
    assert lines(cb)[0] == "LIFECYCLE SUMMARY ***" and len(lines(cb)) == 5


def test_the_ansible_2_19_result_names_are_read_too() -> None:
    class Result219:
        def __init__(self, task: FakeTask, data: Dict[str, Any]) -> None:
            self.task, self.result, self.host = task, data, FakeHost()

    cb = callback(show_progress=False)
    cb.v2_runner_on_ok(Result219(phase_task(), result("install_succeeded")))
    assert [r.name for r in cb.rows] == ["keystone-install-6beab32d"]


def test_the_documentation_is_yaml_with_the_option() -> None:
    doc = yaml.safe_load(ls.DOCUMENTATION)
    assert (doc["name"], doc["type"]) == ("lifecycle_summary", "aggregate")
    assert doc["options"]["show_progress"]["default"] is True
    assert doc["options"]["show_progress"]["env"] == [{"name": "LCM_LIFECYCLE_SUMMARY_PROGRESS"}]
    assert (ls.CallbackModule.CALLBACK_TYPE, ls.CallbackModule.CALLBACK_NAME, ls.CallbackModule.CALLBACK_NEEDS_ENABLED) \
        == ("aggregate", "lcm.openstack.lifecycle_summary", True)
