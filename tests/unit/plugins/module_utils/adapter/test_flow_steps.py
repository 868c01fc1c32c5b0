"""plugins/module_utils/adapter/flow_steps.py: the arguments a playbook gives
lcm.openstack.flow_steps, checked before anything is decided; what comes
back is the plan alone (the inputs' values, which hold passwords, never)."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.flow_steps import BadArguments, flow_steps
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FLOWS
from ansible_collections.lcm.openstack.plugins.module_utils.flows import update
from ansible_collections.lcm.openstack.plugins.modules import flow_steps as module
from support.flow_cases import INPUTS

GIVEN = {"inputs": INPUTS, "traffic_skipped": ""}


@pytest.mark.parametrize("args,message", [
    ({"flow": "greenfield", "inputs": GIVEN, "records": {}}, "not records"),
    ({"flow": "upgrade", "inputs": GIVEN}, "flow must be one of greenfield, update, rollback, remove, got 'upgrade'"),
    ({"flow": "update", "inputs": INPUTS}, "inputs must be what lcm.openstack.flow_inputs returned"),
    ({"flow": "update", "inputs": GIVEN, "record": ["keystone"]}, "record and release must be mappings"),
    ({"flow": "update", "inputs": GIVEN, "release": "none"}, "record and release must be mappings"),
    ({"flow": "update", "inputs": GIVEN, "undo": "maybe"}, "undo must be true or false"),
    ({"flow": "update", "inputs": GIVEN, "strategy": "blue-green"}, "strategy must be one of drain, rolling, got 'blue-green'"),
    ({"flow": "rollback", "inputs": GIVEN, "undo": True}, "a failed rollback is not undone"),
    ({"flow": "remove", "inputs": GIVEN, "undo": "yes"}, "a failed remove is not undone"),
    ({"flow": "update", "inputs": GIVEN, "undo": True, "failed": {"started": True}}, "failed takes started and ended"),
    ({"flow": "update", "inputs": GIVEN, "failed": {"begun": True}}, "failed takes started and ended"),
    ({"flow": "update", "inputs": GIVEN, "failed": {"started": "maybe"}}, "failed.started and failed.ended must be true"),
])
def test_a_wrong_argument_is_named(args: Dict[str, Any], message: str) -> None:
    with pytest.raises(BadArguments, match=message):
        flow_steps(args)


def test_the_plan_holds_no_input_value() -> None:
    plan = flow_steps({"flow": "update", "inputs": GIVEN, "record": {"state": "Operational", "current_version": "1"},
                       "release": {"operation": "upgrade", "status": {"revision": 3}, "values": INPUTS["values"]}})
    assert "not-a-decision" not in json.dumps(plan)
    assert set(plan) == {"flow", "run", "steps", "message", "planned", "from_revision", "rollback", "traffic_backend",
                         "strategy", "jobs"}


def test_a_skipped_read_says_nothing_of_the_release() -> None:
    """A preview the playbook skipped (the record said enough) counts as no
    operation, no revision: the decision is the one made without it."""
    record = {"state": "Removed"}
    without = flow_steps({"flow": "greenfield", "inputs": GIVEN, "record": record})
    skipped = flow_steps({"flow": "greenfield", "inputs": GIVEN, "record": record,
                          "release": {"skipped": True, "changed": False}})
    assert skipped == without and without["run"][0] == "start"


def test_undo_is_a_flag_as_the_playbooks_write_it() -> None:
    record = {"flow": {"name": "update", "state": "Running", "from_revision": 7}}
    plan = flow_steps({"flow": "update", "inputs": GIVEN, "record": record, "undo": "true", "backup_ref": ""})
    assert plan["rollback"] == {"revision": 7, "restore": False, "version": ""}


def test_the_documented_choices_are_the_tables() -> None:
    options = yaml.safe_load(module.DOCUMENTATION)["options"]
    assert options["flow"]["choices"] == list(FLOWS)
    assert options["strategy"]["choices"] == list(update.STRATEGIES)
