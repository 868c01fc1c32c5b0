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

import copy
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FLOWS
from ansible_collections.lcm.openstack.plugins.module_utils.common.tables import aligned
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration_or_dash, now_text as now, seconds_between

FLOW_ACTIONS = ("start", "end")
FLOW_RESULTS = ("Succeeded", "Failed", "RolledBack")
SERVICE_STATES = ("Planning", "Installing", "Testing", "Operational", "Draining", "Upgrading",
                  "RollingBack", "Removing", "Removed", "Failed")


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

    def validate(self) -> None:
        if self.flow_action and self.flow not in FLOWS:
            raise PhaseError(f"flow.name must be one of {', '.join(FLOWS)}")
        if self.flow_action == "end" and self.result not in FLOW_RESULTS:
            raise PhaseError(f"flow.result must be one of {', '.join(FLOW_RESULTS)} to end a flow")
        if self.lifecycle_state and self.lifecycle_state not in SERVICE_STATES:
            raise PhaseError(f"lifecycle_state must be one of {', '.join(SERVICE_STATES)}")


def start(status: Dict[str, Any], req: LifecycleRequest, at: str) -> None:
    """Begin a flow record, or continue the one an earlier run of it left:
    interrupted (Running), or Failed with nothing undone (continuable)."""
    flow = status.get("flow") or {}
    if (flow.get("name") == req.flow and flow.get("targetVersion", "") == (req.target_version or "")
            and (flow.get("state") == "Running" or continuable(status))):
        flow["planned"] = list(req.planned) or flow.get("planned", [])
        if flow.get("state") != "Running":
            flow.update(state="Running", message="")
            flow.pop("completedAt", None)
        return
    status["flow"] = {
        "name": req.flow, "state": "Running", "startedAt": at,
        "fromVersion": status.get("currentVersion", ""), "targetVersion": req.target_version or "",
        "fromRevision": int(req.from_revision or 0),
        "planned": list(req.planned), "phases": [], "message": req.message or "",
    }
    if req.flow == "greenfield" and not status.get("state"):
        status["state"] = "Planning"


def continuable(status: Dict[str, Any]) -> bool:
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


def end(status: Dict[str, Any], req: LifecycleRequest, at: str, strict: bool = True) -> None:
    flow = status.get("flow")
    if not flow or flow.get("name") != req.flow:
        if not strict:  # check mode: the start was not written either
            return
        raise PhaseError(f"no {req.flow} flow was started for this service; start it first (flow.action=start)")
    if flow.get("state") == req.result and flow.get("message", "") == (req.message or ""):
        return
    flow.update(state=req.result, completedAt=at, message=req.message or "")
    if not flow.get("targetVersion") and status.get("currentVersion"):
        flow["targetVersion"] = status["currentVersion"]  # a rollback learns it on the way


def rows(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per Phase of the flow: type, result, duration, name."""
    status = record.get("status") or {}
    history = {e.get("name"): e for e in status.get("history") or []}
    out = []
    for name in (status.get("flow") or {}).get("phases") or []:
        entry = history.get(name, {})
        out.append({"phase": entry.get("type", ""), "result": entry.get("result", "Unknown"),
                    "duration_seconds": seconds_between(entry.get("startedAt"), entry.get("completedAt")),
                    "name": name, "message": entry.get("message", "")})
    return out


def report(record: Dict[str, Any]) -> str:
    """The summary a flow prints at its end."""
    status = record.get("status") or {}
    flow = status.get("flow") or {}
    service = (record.get("spec") or {}).get("service") or record["metadata"]["name"]
    table = [("PHASE", "RESULT", "DURATION", "PHASE RESOURCE")]
    table += [(r["phase"], r["result"], duration_or_dash(r["duration_seconds"]), r["name"]) for r in rows(record)]
    where = f"{service} ({record['metadata'].get('namespace')})"
    state = status.get("state") or "unknown"
    if not flow:
        version = status.get("currentVersion")
        return f"{where}: no flow recorded yet; service {state}{', version ' + version if version else ''}"
    lines = [f"{where}: {flow.get('name')} flow {flow.get('state') or 'not ended'}, {_versions(flow)}; "
             f"service {state}"]
    lines += aligned(table)
    if len(table) == 1:
        lines.append("(no phase ran)")
    total = seconds_between(flow.get("startedAt"), flow.get("completedAt"))
    if total is not None:
        lines.append(f"total {duration_or_dash(total)}")
    if flow.get("message"):
        lines.append(flow["message"])
    return "\n".join(lines)


def summary(record: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """A ServiceLifecycle as the module returns it (snake_case keys)."""
    if not record:
        return {}
    status, spec = record.get("status") or {}, record.get("spec") or {}
    flow = status.get("flow") or {}
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
                 "message": flow.get("message", ""), "phases": rows(record)} if flow else {},
    }


def unmet_dependencies(lifecycle_res: Any, namespace: str, depends_on: Sequence[str]) -> List[str]:
    """Dependencies that are not Operational, each with what it is instead."""
    out = []
    for name in depends_on:
        try:
            record = lifecycle_res.get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            out.append(f"{name} (no ServiceLifecycle in {namespace})")
            continue
        state = (record.get("status") or {}).get("state", "")
        if state != "Operational":
            out.append(f"{name} ({state or 'no state'})")
    return out


def run(lifecycle: Lifecycle, req: LifecycleRequest, check_mode: bool = False) -> Dict[str, Any]:
    """Bring the record to what the request asks; return changed and the record.
    In check mode nothing is written and changed says whether it would be."""
    req.validate()
    changed = False
    existing = lifecycle.get()
    if existing is None or (req.depends_on is not None
                            and list((existing.get("spec") or {}).get("dependsOn") or []) != list(req.depends_on)):
        if not check_mode:
            lifecycle.ensure(depends_on=req.depends_on)
        changed = True
    if req.flow_action == "start" and req.require_dependencies:
        depends = req.depends_on if req.depends_on is not None else \
            ((lifecycle.get() or {}).get("spec") or {}).get("dependsOn") or []
        unmet = unmet_dependencies(lifecycle.res, lifecycle.namespace, depends)
        if unmet:
            raise PhaseError(f"{req.service} depends on services that are not Operational: {', '.join(unmet)}. "
                             "Run their flows first, or set require_dependencies=false")
    at = now()

    def change(status: Dict[str, Any]) -> None:
        if req.flow_action == "start":
            start(status, req, at)
        elif req.flow_action == "end":
            end(status, req, at, strict=not check_mode)
        if req.lifecycle_state:
            status["state"] = req.lifecycle_state
    if req.flow_action or req.lifecycle_state:
        changed = lifecycle.update(change, dry_run=check_mode) or changed
    record = lifecycle.get() or {}
    if check_mode:  # what the record would become
        record = copy.deepcopy(record or {"metadata": {"name": req.service, "namespace": req.namespace},
                                          "spec": {"service": req.service, "release": req.release}})
        record.setdefault("status", {})
        change(record["status"])
    before, after = summary(existing), summary(record)
    return {"changed": changed, "lifecycle": after, "report": report(record) if record else "",
            "diff": {"before": _without_phases(before), "after": _without_phases(after)}}


def _without_phases(summary_: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(summary_)
    if out.get("flow"):
        out["flow"] = {k: v for k, v in out["flow"].items() if k != "phases"}
    return out


def _versions(flow: Dict[str, Any]) -> str:
    source, target = flow.get("fromVersion"), flow.get("targetVersion")
    if source and target and source != target:
        return f"{source} -> {target}"
    return f"version {target or source or 'unknown'}"
