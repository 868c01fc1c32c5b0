# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Step and Plan every flow table returns, and the rules the tables share.

A flow table (greenfield.py, update.py, rollback.py, remove.py) reads:

- the service's ServiceLifecycle record as lcm.openstack.phase_info returns
  it (lifecycle/flow.py summary(): state, current_version, flow with its
  name, state, target_version, from_revision and the Phases it ran, each
  with its type and result), or an empty mapping when there is none;
- the flow's inputs (Service, Traffic);
- what Helm says of the release (Release), when the decision needs it.

It returns a Plan: its steps in order, each run or left out, each with its
reason in one sentence. The playbooks run the steps named in Plan.run, one
task (or one role) a step, and decide nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

# The flows.
GREENFIELD, UPDATE, ROLLBACK_FLOW, REMOVE = "greenfield", "update", "rollback", "remove"

# The steps a Plan names, as the playbooks select them (`when: "'upgrade' in flow_steps.run"`).
READ_RELEASE = "read_release"  # the decision needs what Helm says: read it, then decide again
NOTHING = "nothing"  # the flow has nothing to do: say why (the message) and start nothing
REFUSE = "refuse"  # the flow may not run: fail with the message, nothing written
FIND_BACKUP = "find_backup"  # a rollback finds the backup it restores, or refuses, before it starts
START = "start"  # start the flow on the ServiceLifecycle (or continue the one a run left)
TRAFFICDRAIN = "trafficdrain"
INSTALL = "install"
UPGRADE = "upgrade"
CHECK = "check"  # the project's upgrade checks, before anything changes
CONTRACT = "contract"  # a rolling update's last database step, once no old pod is left
ROLLBACK = "rollback"
TRAFFICROLLOUT = "trafficrollout"
TEST = "test"
UNINSTALL = "uninstall"
END = "end"  # end the flow with its own task (a greenfield's traffic rollout ends it itself)

# What the record says.
SUCCEEDED, RUNNING = "Succeeded", "Running"
OPERATIONAL, REMOVED = "Operational", "Removed"

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    name: str
    reason: str  # one sentence
    run: bool = True  # False: left out, for the reason


def take(name: str, reason: str) -> Step:
    return Step(name, reason, True)


def leave_out(name: str, reason: str) -> Step:
    return Step(name, reason, False)


@dataclass(frozen=True)
class Service:
    """The service a flow acts on, and the version it is asked for ('' for none)."""

    service: str
    namespace: str
    release: str
    version: str = ""


@dataclass(frozen=True)
class Traffic:
    backend: str = "service_selector"
    mode: str = "gate"
    skipped: str = ""  # why the flow takes no traffic step (traffic_backend none); '' when it takes them

    @property
    def gated(self) -> bool:
        """The gate mode of the Service's own selector: a new release already has the traffic."""
        return self.backend == "service_selector" and self.mode == "gate"


@dataclass(frozen=True)
class Release:
    """What Helm said of the release: the preview of lcm.openstack.helm_release
    in check mode (operation: install, upgrade or none; the deployed revision),
    or how many releases lcm.openstack.helm_release_info found. A read the
    playbook skipped says nothing: no operation, no revision, none found."""

    operation: str = "none"
    revision: int = 0
    found: int = 0

    @classmethod
    def of(cls, result: Optional[Mapping[str, Any]]) -> Optional["Release"]:
        """The registered result of the read; None when it was not read yet."""
        if result is None:
            return None
        if result.get("skipped"):
            return cls()
        status = result.get("status") or {}
        return cls(operation=str(result.get("operation") or "none"), revision=int(status.get("revision") or 0),
                   found=len(result.get("releases") or []))


@dataclass(frozen=True)
class RollbackTo:
    """Where a rollback returns the service."""

    revision: int  # 0: the previous deployed revision
    restore: bool  # restore the database the upgrade backed up
    version: str = ""  # the version it is recorded at ('' : the revision's own)


@dataclass(frozen=True)
class Plan:
    flow: str
    steps: Tuple[Step, ...]
    message: str = ""  # for NOTHING and REFUSE: what the run says
    planned: Tuple[str, ...] = ()  # the phase types the flow's start records as planned
    from_revision: int = 0  # the revision an update starts from (and rolls back to)
    rollback: Optional[RollbackTo] = None
    traffic_backend: str = ""  # the backend the traffic steps use
    strategy: str = ""  # an update's: rolling or drain
    # The Jobs of an update's phases, made from the chart's db-sync Job
    # (common/openstack_upgrade.py): {check: [...], expand: [...], contract: [...]}.
    jobs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def run(self) -> List[str]:
        return [s.name for s in self.steps if s.run]

    def as_dict(self) -> Dict[str, Any]:
        return {
            "flow": self.flow, "run": self.run, "message": self.message,
            "steps": [{"step": s.name, "run": s.run, "reason": s.reason} for s in self.steps],
            "planned": list(self.planned), "from_revision": self.from_revision,
            "rollback": {"revision": self.rollback.revision, "restore": self.rollback.restore,
                         "version": self.rollback.version} if self.rollback else {},
            "traffic_backend": self.traffic_backend, "strategy": self.strategy,
            "jobs": {k: list(v) for k, v in self.jobs.items()},
        }


def nothing(flow: str, message: str) -> Plan:
    return Plan(flow, (take(NOTHING, message),), message=message)


def read_release(flow: str, reason: str) -> Plan:
    return Plan(flow, (take(READ_RELEASE, reason),))


# -- what the record says -----------------------------------------------------
def state(record: Record) -> str:
    return str(record.get("state") or "")


def flow(record: Record) -> Mapping[str, Any]:
    return record.get("flow") or {}


def ran(record: Record) -> List[Tuple[str, str]]:
    """The flow's Phases in the order they ran: (type, result)."""
    return [(str(p.get("phase") or ""), str(p.get("result") or "")) for p in flow(record).get("phases") or []]


def resumed(record: Record, name: str, version: Optional[str] = None) -> bool:
    """The record's flow is `name`, still Running (an earlier run of it was
    interrupted), to `version` when one is given: this run resumes it."""
    current = flow(record)
    return (current.get("name") == name and current.get("state") == RUNNING
            and (version is None or str(current.get("target_version") or "") == version))


def succeeded(record: Record, ptype: str, after: Optional[str] = None) -> bool:
    """A `ptype` Phase Succeeded in the record's flow; with `after`, once a
    Phase of type `after` had Succeeded (counted from the first that did)."""
    phases = ran(record)
    if after is not None:
        if (after, SUCCEEDED) not in phases:
            return False
        phases = phases[phases.index((after, SUCCEEDED)):]
    return (ptype, SUCCEEDED) in phases


def operational_at(record: Record, version: str, release: Release) -> bool:
    """Nothing to do: Operational at the version asked for, and Helm would not change the release."""
    return (state(record) == OPERATIONAL and str(record.get("current_version") or "") == version
            and release.operation == "none")


def after_failure(name: str, started: bool, ended: bool) -> Plan:
    """A step of the flow failed where nothing put it right (or its undo failed
    too): the flow ends Failed, unless the undo ended it already (RolledBack,
    Removed) or the run failed before the flow started (there is none to end)."""
    if not started:
        return Plan(name, (leave_out(END, "the run failed before the flow started: there is no flow to end"),))
    if ended:
        return Plan(name, (leave_out(END, "the flow was ended already, with what its undo did"),))
    return Plan(name, (take(END, "the flow ends Failed where it stands"),))


BEFORE_CONTRACT = ("a rolling update that failed before its contract: the expanded schema still serves the old "
                   "release, so the rollback is Helm's alone, with no database restore, and the traffic keeps flowing")


def before_contract(record: Record) -> bool:
    """The record's flow is a rolling update (it planned a contract) whose contract has not started."""
    current = flow(record)
    return (current.get("name") == UPDATE and CONTRACT in (current.get("planned") or [])
            and CONTRACT not in [ptype for ptype, _result in ran(record)])


def rollout(traffic: Traffic, why: str) -> Step:
    if traffic.skipped:
        return leave_out(TRAFFICROLLOUT, traffic.skipped)
    return take(TRAFFICROLLOUT, why)
