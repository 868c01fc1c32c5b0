"""plugins/action/flow_inputs: the play's variables in, the typed inputs or one
line per bad input out."""

from __future__ import annotations

from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.lcm.openstack.plugins.action.flow_inputs import ActionModule


def _run(args: dict, task_vars: dict) -> dict:
    task = mock.MagicMock(args=args, async_val=0, check_mode=False, diff=False)
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=mock.MagicMock(),
                          shared_loader_obj=None)
    action._templar.template.side_effect = lambda value: value
    return action.run(task_vars=task_vars)


def test_the_inputs_come_back_typed_and_nothing_changes() -> None:
    result = _run({"needs_version": True}, {"service": "keystone", "version": "2025.1", "to_revision": "4",
                                            "unrelated": "x"})
    assert result["changed"] is False and not result.get("failed")
    assert result["inputs"]["to_revision"] == 4 and result["inputs"]["release"] == "keystone"
    assert "unrelated" not in result["inputs"]


def test_bad_inputs_fail_with_one_line_each() -> None:
    result = _run({}, {"service": "keystone", "traffic_backend": "istio", "phase_timeout": "abc"})
    assert result["failed"] is True and "inputs" not in result
    assert result["msg"].split("\n") == result["errors"]
    assert [e.split(":")[0] for e in result["errors"]] == ["phase_timeout", "traffic_backend"]


def test_the_playbook_default_is_used_when_the_input_is_left_out() -> None:
    assert _run({"defaults": {"dependency_timeout": 3600}}, {"service": "keystone"})["inputs"]["dependency_timeout"] == 3600


def test_an_unknown_option_is_refused() -> None:
    with pytest.raises(AnsibleActionFail, match="not needs_values"):
        _run({"needs_values": True}, {"service": "keystone"})


def test_a_flow_without_traffic_is_told_why() -> None:
    assert _run({}, {"service": "openvswitch", "traffic_backend": "none"})["traffic_skipped"] == "traffic_backend none"
    assert _run({}, {"service": "keystone"})["traffic_skipped"] == ""
