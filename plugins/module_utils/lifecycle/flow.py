# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flow's record on the ServiceLifecycle, and the summary a flow ends with.

A flow (greenfield, update, rollback, remove) is a chain of phases. Its
record lives in the ServiceLifecycle's `status.flow`: which flow, from and to
which version, the phase types it plans, and the Phases it ran. Starting a
flow while the same flow to the same version is still Running (an earlier run
was interrupted), or after it failed without undoing anything (continuable),
continues that record: the summary of the re-run still lists the phases the
first run completed, and the re-run goes on from the step that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import (
    FlowRecord, LifecycleStatus, ServiceLifecycle, lifecycle_flow, lifecycle_spec, lifecycle_status,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FLOWS
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration_or_dash, parse_time, seconds_between

FLOW_ACTIONS = ("start", "end")
FLOW_RESULTS = ("Succeeded", "Failed", "RolledBack")
SERVICE_STATES = ("Planning", "Installing", "Testing", "Operational", "Draining", "Upgrading",
                  "RollingBack", "Removing", "Removed", "Failed")
# The steps a flow without traffic (traffic_backend none) leaves out, and
# how the report shows a step the flow did not take.
TRAFFIC_TYPES = ("trafficdrain", "trafficrollout")
SKIPPED = "Skipped"


@dataclass
class LifecycleRequest:
    service: str
    release: str
    namespace: str
    depends_on: Optional[Sequence[str]] = None
    lifecycle_state: Optional[str] = None
    message: str = ""
    flow: Optional[str] = None
    flow_action: Optional[str] = None  # start | end
    planned: Sequence[str] = ()
    target_version: str = ""
    from_revision: int = 0
    result: Optional[str] = None
    require_dependencies: bool = True
    dependency_timeout: float = 0  # seconds a flow start waits for its dependencies; 0: read them once
    dependencies_since: str = ""  # a Failed or Removed dependency that ended before this is waited for
    site: Optional[Mapping[str, Any]] = None  # name, level, run, expected_duration (site_member.py)
    removed_with: Sequence[str] = ()  # a removal: dependents the same run removes, waited for
    took_over: str = ""  # the flow Lease was taken over from a run that stopped renewing it: how
    traffic_skipped: str = ""  # the flow takes no traffic step: why (its planned ones are recorded as skipped)

    def validate(self) -> None:
        if self.flow_action and self.flow not in FLOWS:
            raise LifecycleError(f"flow.name must be one of {', '.join(FLOWS)}")
        if self.flow_action == "end" and self.result not in FLOW_RESULTS:
            raise LifecycleError(f"flow.result must be one of {', '.join(FLOW_RESULTS)} to end a flow")
        if self.lifecycle_state and self.lifecycle_state not in SERVICE_STATES:
            raise LifecycleError(f"lifecycle_state must be one of {', '.join(SERVICE_STATES)}")
        if self.dependency_timeout < 0:
            raise LifecycleError("dependency_timeout must be 0 (do not wait) or more seconds")
        if self.dependencies_since and parse_time(self.dependencies_since) is None:
            raise LifecycleError(f"dependencies_since {self.dependencies_since!r} is not a timestamp such as "
                                 "2026-01-31T12:00:00Z")


def start(status: LifecycleStatus, req: LifecycleRequest, at: str) -> None:
    """Begin a flow record, or continue the one an earlier run of it left:
    interrupted (Running), or Failed with nothing undone (continuable)."""
    flow = status.get("flow") or {}
    planned = [p for p in req.planned if not (req.traffic_skipped and p in TRAFFIC_TYPES)]
    if (flow.get("name") == req.flow and flow.get("targetVersion", "") == (req.target_version or "")
            and (flow.get("state") == "Running" or continuable(status))):
        flow["planned"] = planned or flow.get("planned", [])
        if flow.get("state") != "Running":
            flow.update(state="Running", message="")
            flow.pop("completedAt", None)
    else:
        flow = status["flow"] = {
            "name": req.flow, "state": "Running", "startedAt": at,
            "fromVersion": status.get("currentVersion", ""), "targetVersion": req.target_version or "",
            "fromRevision": int(req.from_revision or 0),
            "planned": planned, "phases": [], "message": req.message or "",
        }
        if req.flow == "greenfield" and not status.get("state"):
            status["state"] = "Planning"
    for index, ptype in enumerate(req.planned):
        if ptype not in planned:  # where it stands: after the planned steps before it
            _skipped(flow, ptype, req.traffic_skipped, len([p for p in req.planned[:index] if p in planned]))


def skip(status: LifecycleStatus, ptype: str, reason: str) -> None:
    """Record that the running flow does not take step `ptype`, and why (a
    release that renders no Service has no traffic to move), after the
    Phases it ran so far. Nothing without a running flow."""
    flow = status.get("flow") or {}
    if flow.get("state") == "Running":
        _skipped(flow, ptype, reason, len(flow.get("phases") or []))


def _skipped(flow: FlowRecord, ptype: str, reason: str, after: int) -> None:
    """Once per step and place: a re-run that skips it again adds nothing."""
    entries = flow.setdefault("skipped", [])
    if not any(e.get("phase") == ptype and e.get("after") == after for e in entries):
        entries.append({"phase": ptype, "reason": reason, "after": after})


def continuable(status: LifecycleStatus) -> bool:
    """A flow that ended Failed where its phases left the service (a greenfield
    whose traffic rollout failed: installed, tested, not yet open) goes on from
    the failed step when run again to the same version: its Phases keep their
    flow, so the ones that Succeeded are skipped and the failed one resumes.
    A flow that undid its work (a rollback or uninstall ran in it, the service
    is Removed) is over: a re-run starts a new one."""
    flow = status.get("flow") or {}
    if flow.get("state") != "Failed" or status.get("state") == "Removed":
        return False
    undone = {e.get("name") for e in status.get("history") or [] if e.get("type") in ("rollback", "uninstall")}
    return not undone.intersection(flow.get("phases") or [])


def end(status: LifecycleStatus, req: LifecycleRequest, at: str, strict: bool = True) -> None:
    flow = status.get("flow")
    if not flow or flow.get("name") != req.flow:
        if not strict:  # check mode: the start was not written either
            return
        raise LifecycleError(f"no {req.flow} flow was started for this service; start it first (flow.action=start)")
    if flow.get("state") == req.result and flow.get("message", "") == (req.message or ""):
        return
    flow.update(state=req.result, completedAt=at, message=req.message or "")
    if not flow.get("targetVersion") and status.get("currentVersion"):
        flow["targetVersion"] = status["currentVersion"]  # a rollback learns it on the way


def rows(record: ServiceLifecycle) -> List[Dict[str, Any]]:
    """One row per Phase of the flow: type, result, duration, name."""
    status = lifecycle_status(record)
    history = {e.get("name"): e for e in status.get("history") or []}
    out = []
    for name in lifecycle_flow(record).get("phases") or []:
        entry = history.get(name, {})
        out.append({"phase": entry.get("type", ""), "result": entry.get("result", "Unknown"),
                    "duration_seconds": seconds_between(entry.get("startedAt"), entry.get("completedAt")),
                    "name": name, "message": entry.get("message", "")})
    return out


def with_skipped(record: ServiceLifecycle) -> List[Dict[str, Any]]:
    """rows(), with a row for each step the flow skipped, where it stood."""
    phases = rows(record)
    places: Dict[int, List[Dict[str, Any]]] = {}
    for entry in lifecycle_flow(record).get("skipped") or []:
        place = min(int(entry.get("after") or 0), len(phases))
        places.setdefault(place, []).append({"phase": entry.get("phase", ""), "result": SKIPPED,
                                             "duration_seconds": None, "name": "",
                                             "message": entry.get("reason", "")})
    out: List[Dict[str, Any]] = []
    for index, row in enumerate(phases):
        out += places.get(index, [])
        out.append(row)
    return out + places.get(len(phases), [])


def report(record: ServiceLifecycle) -> str:
    """The summary a flow prints at its end; a skipped step says why below the table."""
    status, flow = lifecycle_status(record), lifecycle_flow(record)
    service = lifecycle_spec(record).get("service") or record["metadata"]["name"]
    table = [("PHASE", "RESULT", "DURATION", "PHASE RESOURCE")]
    every = with_skipped(record)
    table += [(r["phase"], r["result"], duration_or_dash(r["duration_seconds"]), r["name"] or "-") for r in every]
    where = f"{service} ({record['metadata'].get('namespace')})"
    state = status.get("state") or "unknown"
    if not flow:
        version = status.get("currentVersion")
        return f"{where}: no flow recorded yet; service {state}{', version ' + version if version else ''}"
    lines = [f"{where}: {flow.get('name')} flow {flow.get('state') or 'not ended'}, {_versions(flow)}; "
             f"service {state}"]
    # Imported here: only the report a flow ends with lays out a table, and
    # the modules that merely write the record (traffic, phase) then load one
    # Python module fewer (tests/unit/plugins/modules/test_payloads.py).
    from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned  # pylint: disable=import-outside-toplevel
    lines += aligned(table)
    if len(table) == 1:
        lines.append("(no phase ran)")
    total = seconds_between(flow.get("startedAt"), flow.get("completedAt"))
    if total is not None:
        lines.append(f"total {duration_or_dash(total)}")
    lines += [f"{r['phase']} skipped: {r['message']}" for r in every if r["result"] == SKIPPED]
    if flow.get("message"):
        lines.append(flow["message"])
    return "\n".join(lines)


def summary(record: Optional[ServiceLifecycle]) -> Dict[str, Any]:
    """A ServiceLifecycle as the module returns it (snake_case keys)."""
    if not record:
        return {}
    status, spec, flow = lifecycle_status(record), lifecycle_spec(record), lifecycle_flow(record)
    return {
        "name": record["metadata"]["name"], "namespace": record["metadata"].get("namespace"),
        "service": spec.get("service"), "release": spec.get("release"),
        "depends_on": list(spec.get("dependsOn") or []),
        "state": status.get("state", ""), "current_version": status.get("currentVersion", ""),
        "previous_version": status.get("previousVersion", ""), "current_phase": status.get("currentPhase", ""),
        "flow": {"name": flow.get("name"), "state": flow.get("state"), "started_at": flow.get("startedAt"),
                 "completed_at": flow.get("completedAt"), "from_version": flow.get("fromVersion", ""),
                 "target_version": flow.get("targetVersion", ""), "from_revision": flow.get("fromRevision", 0),
                 "planned": list(flow.get("planned") or []),
                 "skipped": [{"phase": e.get("phase", ""), "reason": e.get("reason", "")}
                             for e in flow.get("skipped") or []],
                 "message": flow.get("message", ""), "phases": rows(record)} if flow else {},
    }


def _versions(flow: FlowRecord) -> str:
    source, target = flow.get("fromVersion"), flow.get("targetVersion")
    if source and target and source != target:
        return f"{source} -> {target}"
    return f"version {target or source or 'unknown'}"
