"""plugins/plugin_utils/progress_action.py: the action plugin's own decisions (where a line goes,
at which verbosity, what the module's environment gets), with stand-ins for Ansible's display and
connection; the whole path runs in tests/integration/test_progress.py."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest
from ansible.plugins.action import ActionBase

from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import ENV
from ansible_collections.lcm.openstack.plugins.plugin_utils import progress_action


class FakeDisplay:
    def __init__(self, verbosity: int) -> None:
        self.verbosity = verbosity
        self.shown: List[Tuple[str, bool]] = []

    def display(self, msg: str, stderr: bool = False) -> None:
        self.shown.append((msg, stderr))


@pytest.mark.parametrize("verbosity, shown", [
    (0, [("[keystone] keystone install wave 1/2: started: Job a", False)]),
    (1, [("[keystone] keystone install wave 1/2: started: Job a", False),
         ("[keystone] keystone install wave 1/2: Secret b Current: exists", False)]),
])
def test_a_detail_line_needs_v(monkeypatch: pytest.MonkeyPatch, verbosity: int, shown: List[Any]) -> None:
    fake = FakeDisplay(verbosity)
    monkeypatch.setattr(progress_action, "display", fake)
    progress_action._show("keystone", "keystone install wave 1/2: started: Job a", 0)
    progress_action._show("keystone", "keystone install wave 1/2: Secret b Current: exists", 1)
    assert fake.shown == shown


@pytest.mark.parametrize("callback, stderr", [
    ("ansible.builtin.default", False), ("default", False), ("ansible.builtin.json", True),
    ("json", True), ("ansible.posix.jsonl", True), ("community.general.yaml", False),
])
def test_beside_a_json_stdout_callback_the_lines_go_to_stderr(monkeypatch: pytest.MonkeyPatch, callback: str,
                                                              stderr: bool) -> None:
    monkeypatch.setenv("ANSIBLE_STDOUT_CALLBACK", callback)
    assert progress_action._document_callback() is stderr


class FakeShell:
    @staticmethod
    def env_prefix(**env: str) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(env.items()))


class FakeConnection:
    _shell = FakeShell()


def test_the_module_finds_the_channel_in_its_environment_beside_the_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    def task_environment(self: Any, raw_environment_out: Any = None) -> str:
        if isinstance(raw_environment_out, dict):
            raw_environment_out.update({"HTTPS_PROXY": "http://proxy:3128"})
        return "HTTPS_PROXY=http://proxy:3128"
    monkeypatch.setattr(ActionBase, "_compute_environment_string", task_environment)
    action = progress_action.ProgressAction.__new__(progress_action.ProgressAction)
    action._connection = FakeConnection()
    raw: Dict[str, str] = {}
    assert action._compute_environment_string(raw) == "HTTPS_PROXY=http://proxy:3128"  # no channel open
    action._progress_path = "/tmp/lcm-progress-x/s"
    assert action._compute_environment_string(raw) == f"HTTPS_PROXY=http://proxy:3128 {ENV}=/tmp/lcm-progress-x/s"
    assert raw == {"HTTPS_PROXY": "http://proxy:3128", ENV: "/tmp/lcm-progress-x/s"}
