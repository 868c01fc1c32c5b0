# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The update flow's table: move a running service to a new version.

- It always needs Helm's word (the preview of the release): read_release.
- Nothing to do: Operational at the version asked for, and Helm would not
  change the release (same chart, same values).
- Refused, before anything is read from the release: a move between
  OpenStack releases that the projects do not support (common/openstack_release.py:
  N -> N+1 or SLURP -> SLURP), or any move back (the rollback flow's).
- Refused, before anything is written: there is no Helm release to update.
- Otherwise the strategy's steps, between the flow's start (which records the
  revision the service runs, the one a failure rolls back to) and its end.
  The strategy is an input; `drain` is the one the playbooks run:
  drain -> upgrade (database backup first) -> traffic rollout -> test.
  The drain is left out without traffic (traffic_backend none), and on a
  re-run of this update to this version that had rolled the traffic out to
  the new version already (it was interrupted in the test): closing the gate
  again would only cut the service off. A re-run of an update that had begun
  to roll back drains again.
- Undone when the upgrade, the rollout or the test fails: the rollback chain
  (rollback.chain) back to the revision the flow started from, the database
  restored when restore_database is set and the upgrade took a backup; the
  flow ends RolledBack. A failed drain is not undone: the flow is Failed.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_release
from ansible_collections.lcm.openstack.plugins.module_utils.flows import rollback
from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    END, REFUSE, ROLLBACK, START, TEST, TRAFFICDRAIN, TRAFFICROLLOUT, UPDATE, UPGRADE, Plan, Record, Release, RollbackTo,
    Service, Step, Traffic, flow, leave_out, nothing, operational_at, ran, read_release, resumed, rollout,
    succeeded, take,
)

DRAIN = "drain"

# A strategy: the phase types the start plans, and the steps between the start and the end.
Strategy = Callable[[Record, Service, Traffic], Tuple[Tuple[str, ...], Tuple[Step, ...]]]


def drain_step(record: Record, service: Service, traffic: Traffic) -> Step:
    if traffic.skipped:
        return leave_out(TRAFFICDRAIN, traffic.skipped)
    if (resumed(record, UPDATE, service.version) and succeeded(record, TRAFFICROLLOUT)
            and ROLLBACK not in [ptype for ptype, _result in ran(record)]):
        return leave_out(TRAFFICDRAIN, "this update had rolled the traffic out to the new version already: "
                                       "draining it again would only cut the service off")
    return take(TRAFFICDRAIN, "the traffic is off while the database and the release change")


def _drain(record: Record, service: Service, traffic: Traffic) -> Tuple[Tuple[str, ...], Tuple[Step, ...]]:
    return (TRAFFICDRAIN, UPGRADE, TRAFFICROLLOUT, TEST), (
        drain_step(record, service, traffic),
        take(UPGRADE, f"the release to {service.version}, its database backed up first"),
        rollout(traffic, "the upgraded service gets its traffic back"),
        take(TEST, "the chart's tests, through the Service as any client"),
    )


STRATEGIES: Dict[str, Strategy] = {DRAIN: _drain}


def decide(record: Record, service: Service, traffic: Traffic, release: Optional[Release],
           strategy: str = DRAIN) -> Plan:
    path = openstack_release.check(str(record.get("current_version") or ""), service.version)
    if not path.supported:  # before anything is read from the release
        message = (f"update of {service.service} refused, nothing changed: {path.reason}. "
                   + ("Update it to each of those releases in turn." if path.through
                      else "Run playbooks/rollback.yml to return it to an earlier release."))
        return Plan(UPDATE, (take(REFUSE, message),), message=message)
    if release is None:
        return read_release(UPDATE, "whether the update changes anything is Helm's word")
    if operational_at(record, service.version, release):
        return nothing(UPDATE, f"{service.service} runs {service.version} and is Operational, "
                               "with the same chart and values.")
    if release.revision <= 0:
        message = (f"update of {service.service} refused, nothing changed: there is no Helm release "
                   f"{service.release} in namespace {service.namespace}; deploy it with the greenfield playbook first.")
        return Plan(UPDATE, (take(REFUSE, message),), message=message)
    planned, steps = STRATEGIES[strategy](record, service, traffic)
    start = take(START, f"{service.service} runs revision {release.revision}: a failure rolls back to it")
    end = take(END, "every step passed: the flow ends, Operational")
    return Plan(UPDATE, (start,) + steps + (end,), planned=planned, from_revision=release.revision)


def undo(record: Record, traffic: Traffic, restore_database: bool, backup_ref: str) -> Plan:
    """The upgrade, the rollout or the test failed: back to the revision the
    flow started from, as the record says now."""
    to = RollbackTo(revision=int(flow(record).get("from_revision") or 0), restore=restore_database and bool(backup_ref))
    steps = rollback.chain(record, UPDATE, traffic, to) + (
        take(END, "the flow ends RolledBack, the service Operational at the revision it started from"),)
    return Plan(UPDATE, steps, rollback=to, traffic_backend=traffic.backend)
