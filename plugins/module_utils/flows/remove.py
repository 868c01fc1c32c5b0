# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remove flow's table: drain -> uninstall -> Removed.

- No record: Helm's word first (read_release, lcm.openstack.helm_release_info).
- Nothing to do: the record says Removed, or there is neither a record nor a
  Helm release (never deployed here, or a wrong name): no ServiceLifecycle
  is made for it.
- Otherwise the uninstall, with the drain before it unless the flow takes no
  traffic (traffic_backend none: no drain, and no backend for the uninstall to
  check beyond the Service's own selector).
- A failure is not undone: the flow is Failed.
"""

from __future__ import annotations

from typing import Optional

from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    END, REMOVE, REMOVED, START, TRAFFICDRAIN, UNINSTALL, Plan, Record, Release, Service, Traffic, leave_out,
    nothing, read_release, state, take,
)


def _where(record: Record) -> str:
    if not record:
        return "deployed (a Helm release) without a ServiceLifecycle"
    return state(record) or "recorded with no state yet"


def decide(record: Record, service: Service, traffic: Traffic, release: Optional[Release]) -> Plan:
    if not record and release is None:
        return read_release(REMOVE, "no ServiceLifecycle: Helm says whether the release is there")
    if state(record) == REMOVED:
        return nothing(REMOVE, f"{service.service} is Removed already.")
    if not record and not (release or Release()).found:
        return nothing(REMOVE, f"{service.service} is not deployed in namespace {service.namespace} (no "
                               f"ServiceLifecycle, no Helm release {service.release}): nothing to remove.")
    steps = (
        take(START, f"{service.service} is {_where(record)}"),
        leave_out(TRAFFICDRAIN, traffic.skipped) if traffic.skipped
        else take(TRAFFICDRAIN, "the traffic is off before the service goes"),
        take(UNINSTALL, "the release and what its phases made go; the database only with purge_database"),
        take(END, "the flow ends, the service Removed"),
    )
    return Plan(REMOVE, steps, planned=(TRAFFICDRAIN, UNINSTALL),
                traffic_backend="service_selector" if traffic.skipped else traffic.backend)
