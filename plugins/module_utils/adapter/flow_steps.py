# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.flow_steps: a flow's next steps, each with its reason
(plugins/module_utils/flows/ decides). Run on the controller by the action
plugin of the same name, from what the playbook already read: the arguments
in, one decision, the Plan out."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_upgrade
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FLOWS
from ansible_collections.lcm.openstack.plugins.module_utils.flows import greenfield, remove, rollback, update
from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    GREENFIELD, REMOVE, UPDATE, Plan, Release, Service, Traffic, after_failure,
)
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow_inputs import Bad, boolean

ARGS = frozenset(("flow", "inputs", "record", "release", "undo", "backup_ref", "strategy", "failed"))
UNDONE = (GREENFIELD, UPDATE)  # the flows whose failure a table undoes


class BadArguments(InputError):
    """An argument the task got wrong: the message says which and how."""


def flow_steps(args: Mapping[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(args) - ARGS)
    if unknown:
        raise BadArguments(f"flow_steps takes {', '.join(sorted(ARGS))}, not {', '.join(unknown)}")
    name = args.get("flow")
    if name not in FLOWS:
        raise BadArguments(f"flow must be one of {', '.join(FLOWS)}, got {name!r}")
    given = args.get("inputs")
    if not isinstance(given, Mapping) or not isinstance(given.get("inputs"), Mapping):
        raise BadArguments("inputs must be what lcm.openstack.flow_inputs returned (registered), with its inputs")
    record = args.get("record") or {}
    release = args.get("release")
    if not isinstance(record, Mapping) or (release is not None and not isinstance(release, Mapping)):
        raise BadArguments("record and release must be mappings (a registered result, one of phase_info's lifecycles)")
    try:
        undo = boolean(args.get("undo", False))
    except Bad as exc:
        raise BadArguments(f"undo must be {exc}") from None
    strategy = str(args.get("strategy") or (given.get("inputs") or {}).get("update_strategy") or update.AUTO)
    if strategy != update.AUTO and strategy not in update.STRATEGIES:
        raise BadArguments(f"strategy must be one of {', '.join(update.STRATEGIES)}, got {strategy!r}")
    if undo and name not in UNDONE:
        raise BadArguments(f"undo is for the {' and '.join(UNDONE)} flows: a failed {name} is not undone")
    failed = args.get("failed")
    if failed is not None:
        if undo or not isinstance(failed, Mapping) or set(failed) - {"started", "ended"}:
            raise BadArguments("failed takes started and ended (whether the flow started, whether its undo ended it), "
                               "without undo")
        try:
            return after_failure(name, boolean(failed.get("started", False)), boolean(failed.get("ended", False))).as_dict()
        except Bad as exc:
            raise BadArguments(f"failed.started and failed.ended must be {exc}") from None
    inputs = given["inputs"]
    service = Service(service=str(inputs.get("service") or ""), namespace=str(inputs.get("openstack_namespace") or ""),
                      release=str(inputs.get("release") or inputs.get("service") or ""),
                      version=str(inputs.get("version") or ""))
    traffic = Traffic(backend=str(inputs.get("traffic_backend") or "service_selector"),
                      mode=str(inputs.get("traffic_mode") or "gate"), skipped=str(given.get("traffic_skipped") or ""))
    return decide(name, record, service, traffic, Release.of(release), inputs, undo,
                  str(args.get("backup_ref") or ""), strategy).as_dict()


def decide(name: str, record: Mapping[str, Any], service: Service, traffic: Traffic, release: Any,
           inputs: Mapping[str, Any], undo: bool, backup_ref: str, strategy: str) -> Plan:
    if name == GREENFIELD:
        return greenfield.undo() if undo else greenfield.decide(record, service, traffic, release)
    if name == UPDATE:
        if undo:
            return update.undo(record, traffic, bool(inputs.get("restore_database")), backup_ref)
        steps = openstack_upgrade.steps(str(inputs.get("chart") or service.service), inputs.get("upgrade_commands"))
        return update.decide(record, service, traffic, release, strategy, steps)
    if name == REMOVE:
        return remove.decide(record, service, traffic, release)
    return rollback.decide(record, service, traffic, int(inputs.get("to_revision") or 0),
                           bool(inputs.get("restore_database")))
