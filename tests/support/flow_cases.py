"""The flow tables' cases (tests/unit/fixtures/flows/<flow>.yaml) as the
playbooks put them to lcm.openstack.flow_steps, and what each must return."""

from __future__ import annotations

from typing import Any, Dict, List

import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.flow_steps import flow_steps
from support.paths import UNIT_FIXTURES

INPUTS = {"service": "keystone", "release": "keystone", "openstack_namespace": "openstack", "version": "2",
          "traffic_backend": "service_selector", "traffic_mode": "gate", "restore_database": True,
          "to_revision": None, "values": {"password": "not-a-decision"}, "update_strategy": "drain"}


def load(flow: str) -> List[Dict[str, Any]]:
    return yaml.safe_load((UNIT_FIXTURES / "flows" / f"{flow}.yaml").read_text())


def record(raw: Dict[str, Any]) -> Dict[str, Any]:
    """A record as phase_info returns it: a flow's `ran: ["type result", ...]` as its phases."""
    out = dict(raw)
    if "flow" in raw:
        flow = dict(raw["flow"])
        flow["phases"] = [{"phase": entry.split()[0], "result": entry.split()[1], "name": f"keystone-{n}"}
                          for n, entry in enumerate(flow.pop("ran", []))]
        out["flow"] = flow
    return out


def plan(flow: str, case: Dict[str, Any]) -> Dict[str, Any]:
    given = dict(INPUTS, **{k: v for k, v in (case.get("inputs") or {}).items() if k != "traffic_skipped"})
    args: Dict[str, Any] = {"flow": flow, "record": record(case["record"]),
                            "inputs": {"inputs": given, "traffic_skipped": (case.get("inputs") or {}).get("traffic_skipped", "")}}
    for key in ("release", "undo", "backup_ref", "failed"):
        if key in case:
            args[key] = case[key]
    return flow_steps(args)


def check(flow: str, case: Dict[str, Any]) -> None:
    got = plan(flow, case)
    assert got["flow"] == flow
    assert got["run"] == case["run"]
    assert got["message"] == case.get("message", "")
    left = {s["step"]: s["reason"] for s in got["steps"] if not s["run"]}
    for step, reason in (case.get("left_out") or {}).items():
        assert reason in left.get(step, ""), (step, left)
    taken = {s["step"]: s["reason"] for s in got["steps"] if s["run"]}
    for step, reason in (case.get("reasons") or {}).items():
        assert reason in taken.get(step, ""), (step, taken)
    assert all(s["reason"] for s in got["steps"]), "every step says why"
    for key in ("planned", "from_revision", "rollback", "traffic_backend", "strategy"):
        if key in case:
            assert got[key] == case[key], key
    for step, commands in (case.get("commands") or {}).items():
        assert [" ".join(j["command"]) for j in got["jobs"].get(step, [])] == commands, (step, got["jobs"])
