"""The flow playbooks decide nothing: every `when:` of a flow's tasks selects
a step lcm.openstack.flow_steps returned, and every step a table runs is
selected by a task of that flow."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Set

import pytest
import yaml

from support import flow_cases
from support.paths import ROOT

TASKS = ROOT / "playbooks" / "tasks"
# The files each flow runs its steps from (current_state.yml asks the table;
# rollback_chain.yml runs the rollback steps of the rollback flow and of a
# failed update; flow_failed.yml ends a flow that failed; traffic_rollout.yml
# and test.yml are included by the flows).
FILES = {
    "greenfield": ["flow_greenfield.yml", "current_state.yml", "flow_failed.yml"],
    "update": ["flow_update.yml", "current_state.yml", "rollback_chain.yml", "flow_failed.yml"],
    "rollback": ["flow_rollback.yml", "rollback_chain.yml", "flow_failed.yml"],
    "remove": ["flow_remove.yml", "flow_failed.yml"],
}
SHARED = ["traffic_rollout.yml", "test.yml"]
SELECTION = re.compile(r"^'(\w+)' in flow_(steps|undo|chain|end)\.run$")
# What a task shows, not what the flow does: the start's note on a namespace the credentials may not read.
NOT_A_DECISION = {"service_lifecycle_result.namespace | default('') == 'unreadable'"}


def _tasks(entries: List[Dict[str, Any]]) -> Iterator[Dict[str, Any]]:
    for task in entries or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key) or [])


def _conditions(name: str) -> List[str]:
    out = []
    for task in _tasks(yaml.safe_load((TASKS / name).read_text())):
        when = task.get("when")
        out += [when] if isinstance(when, str) else list(when or [])
    return out


def _passed(name: str) -> List[str]:
    """Steps a task passes on as a role's switch (remove's uninstall_drain)."""
    return [m.group(1) for task in _tasks(yaml.safe_load((TASKS / name).read_text()))
            for value in (task.get("vars") or {}).values() if isinstance(value, str)
            if (m := re.match(r"^\{\{ ('\w+' in flow_(?:steps|undo|chain|end)\.run) \}\}$", value))]


def _selected(flow: str) -> Set[str]:
    found = [c.strip() for name in FILES[flow] for c in _conditions(name) + _passed(name)]
    return {m.group(1) for c in found if (m := SELECTION.match(c))}


@pytest.mark.parametrize("name", sorted({n for names in FILES.values() for n in names} | set(SHARED)))
def test_a_flow_task_only_selects_a_step(name: str) -> None:
    decisions = [c for c in _conditions(name) if not SELECTION.match(c.strip()) and c.strip() not in NOT_A_DECISION]
    assert decisions == []


@pytest.mark.parametrize("flow", sorted(FILES))
def test_every_step_a_table_runs_is_run_by_a_task_of_its_flow(flow: str) -> None:
    ran = {step for case in flow_cases.load(flow) for step in case["run"]}
    assert ran - _selected(flow) == set()


@pytest.mark.parametrize("flow", sorted(FILES))
def test_every_step_a_task_selects_is_one_a_table_runs(flow: str) -> None:
    ran = {step for case in flow_cases.load(flow) for step in case["run"]}
    assert _selected(flow) - ran == set()
