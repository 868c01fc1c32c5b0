# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which flow a service needs, read from its ServiceLifecycle record alone.

The same questions the flow tables ask before a flow acts (flows/greenfield.py's
new service, flows/steps.py's `operational_at`), asked of every service at
once, so the plan says what each flow of the site will do:

- greenfield: no record, a record with no state yet or Removed, or a
  greenfield flow that did not succeed (the re-run resumes it);
- update: an update or rollback flow that is Running or Failed (the re-run
  resumes it), a service that is Failed or in any other state than
  Operational (the update flow alone brings it back), or another version
  asked for than the one it runs;
- nothing: Operational at the version asked for.

An update that ended RolledBack is over: its service is Operational at the
version it started from, so only a version still asked for makes it an
update again, as the update flow itself decides.

What the record cannot show, the release can (drift/assess.py), for a
service the record leaves as it is (`with_drift`):

- update: its chart or its values differ from the deployed revision's. The
  reason names the keys or the chart's files, and that the version stays;
- reconcile: only its objects drifted from the release's manifest, and its
  policy is `drift: correct`: the update flow applies the release again, at
  the same version, with its checks, tests and rollback;
- nothing, the drift named in the reason: its policy is `report`.

For a removal: remove, unless there is no record or it says Removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import LifecycleStatus, ServiceLifecycle, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import CORRECT, POLICY_INPUT, ReleaseDrift

Record = Optional[ServiceLifecycle]


@dataclass(frozen=True)
class Decision:
    flow: str  # greenfield | update | reconcile | remove | nothing
    reason: str  # one short sentence, for the summary
    kept: bool = False  # read from the release: the service stays at the version it runs


def status_of(record: Record) -> LifecycleStatus:
    return lifecycle_status(record)


def _unfinished(status: LifecycleStatus, *names: str) -> str:
    """The state of the record's flow when it is one of `names` and did not end
    in success or a rollback ('' otherwise)."""
    flow = status.get("flow") or {}
    if flow.get("name") in names and flow.get("state") not in ("Succeeded", "RolledBack"):
        return flow.get("state") or "not ended"
    return ""


def for_deploy(record: Record, target: str) -> Decision:
    """The flow that brings the service to `target` (see the module docstring)."""
    if record is None:
        return Decision("greenfield", "no ServiceLifecycle yet")
    status = status_of(record)
    state, current, flow = status.get("state") or "", status.get("currentVersion") or "", status.get("flow") or {}
    greenfield = flow.get("name") == "greenfield" and flow.get("state") != "Succeeded"
    if greenfield:
        return Decision("greenfield", f"the last greenfield did not finish ({flow.get('state') or 'not ended'})")
    if not state:
        return Decision("greenfield", "the ServiceLifecycle has no state yet")
    if state == "Removed":
        return Decision("greenfield", "Removed: deployed anew")
    unfinished = _unfinished(status, "update", "rollback", "remove")
    if unfinished:
        return Decision("update", f"the last {flow.get('name')} did not finish ({unfinished})")
    if state != "Operational":
        return Decision("update", f"{state} at {current or 'an unknown version'}")
    if current != target:
        rolled_back = "; the last update was rolled back" if flow.get("name") == "update" \
            and flow.get("state") == "RolledBack" else ""
        return Decision("update", f"version {current or 'unknown'} -> {target}{rolled_back}")
    return Decision("nothing", f"Operational at {current}")


def for_remove(record: Record) -> Decision:
    """Remove whatever the record does not say is gone."""
    if record is None:
        return Decision("nothing", "no ServiceLifecycle: nothing to remove")
    status = status_of(record)
    state, current = status.get("state") or "", status.get("currentVersion") or ""
    if state == "Removed":
        return Decision("nothing", "Removed already")
    unfinished = _unfinished(status, "remove")
    if unfinished:
        return Decision("remove", f"the last remove did not finish ({unfinished})")
    return Decision("remove", f"{state or 'no state'} at {current or 'an unknown version'}")


def with_drift(decision: Decision, drift: Optional[ReleaseDrift], version: str) -> Decision:
    """The decision once the release is read (see the module docstring); as it
    was for a service the record already moves, or whose release was not read."""
    if decision.flow != "nothing" or drift is None:
        return decision
    if drift.asked:
        return Decision("update", drift.asked_reason(version), kept=True)
    if drift.live and drift.policy == CORRECT:
        return Decision("reconcile", f"{drift.live_reason()}; {POLICY_INPUT}: {CORRECT} applies the release "
                                     f"again at {version}", kept=True)
    if drift.live:
        return Decision("nothing", f"{decision.reason}; {drift.live_reason()} (reported; "
                                   f"{POLICY_INPUT}: {CORRECT} applies the release again)")
    if drift.unread:
        return Decision("nothing", f"{decision.reason}; its release was not compared: {drift.unread}")
    return decision
