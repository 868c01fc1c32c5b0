"""plugins/action/flow_steps: the playbook's reads in, the plan out, nothing
changed, in check mode as otherwise; a wrong argument fails the task."""

from __future__ import annotations

from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.lcm.openstack.plugins.action.flow_steps import ActionModule
from support.flow_cases import INPUTS


def _run(args: dict, check_mode: bool = False) -> dict:
    task = mock.MagicMock(args=args, async_val=0, check_mode=check_mode, diff=False)
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=mock.MagicMock(),
                          shared_loader_obj=None)
    return action.run(task_vars={})


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_plan_comes_back_and_nothing_changes(check_mode: bool) -> None:
    result = _run({"flow": "greenfield", "inputs": {"inputs": INPUTS, "traffic_skipped": ""}}, check_mode)
    assert result["changed"] is False and not result.get("failed")
    assert result["run"] == ["start", "install", "test", "trafficrollout"]


def test_a_wrong_argument_fails_the_task() -> None:
    with pytest.raises(AnsibleActionFail, match="flow must be one of greenfield, update, rollback, remove"):
        _run({"flow": "upgrade", "inputs": {"inputs": INPUTS}})
