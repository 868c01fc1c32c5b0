# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The greenfield flow's table: install -> test -> traffic rollout, for a
service that is not there.

- A record that says the service is there (any state but none or Removed)
  needs Helm's word first: the preview of the release (read_release).
- New (the flow runs): no record or no state yet, Removed, a release Helm
  would install, or a greenfield flow that did not succeed (the re-run goes
  on: its Phases that Succeeded find themselves done, the failed one resumes).
- Anything else is the update flow's business: nothing to do, and the
  message says so unless the service is Operational at the version asked
  for with the same chart and values.
- In the gate mode the new release has its traffic from the start: the
  flow plans no trafficrollout Phase (the rollout step still ends the flow).
  Without traffic (traffic_backend none) there is no rollout step, and the
  flow ends with its own step.
- Undone when the install or the test fails: the service is uninstalled, its
  database dropped, and the flow ends Failed with the service Removed.
"""

from __future__ import annotations

from typing import Optional

from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    END, GREENFIELD, INSTALL, REMOVED, START, TEST, TRAFFICROLLOUT, UNINSTALL, Plan, Record, Release, Service,
    Traffic, flow, leave_out, nothing, operational_at, read_release, rollout, state, take,
)


def needs_release(record: Record) -> bool:
    """Only a record that says the service is there makes Helm's word count."""
    return state(record) not in ("", REMOVED)


def new_service(record: Record, release: Release) -> str:
    """Why the service is new to greenfield ('' when it is not)."""
    current = flow(record)
    if not record:
        return "no ServiceLifecycle yet: a new service"
    if not state(record):
        return "the ServiceLifecycle has no state yet: a first run that failed early"
    if state(record) == REMOVED:
        return "the service was Removed: it is deployed anew"
    if release.operation == "install":
        return "there is no Helm release: it is installed"
    if current.get("name") == GREENFIELD and current.get("state") != "Succeeded":
        return f"the last greenfield did not finish ({current.get('state') or 'not ended'}): this run goes on with it"
    return ""


def decide(record: Record, service: Service, traffic: Traffic, release: Optional[Release]) -> Plan:
    if release is None and needs_release(record):
        return read_release(GREENFIELD, "the ServiceLifecycle says the service is there: Helm says whether it is")
    release = release or Release()
    why = new_service(record, release)
    if not why:
        done = operational_at(record, service.version, release)
        return nothing(GREENFIELD, (
            f"{service.service} is deployed already (version {record.get('current_version') or 'unknown'}, "
            f"{state(record) or 'no state'})"
            f"{'' if done else '; greenfield deploys new services only: run the update flow to change it'}."))
    planned = (INSTALL, TEST) if traffic.gated else (INSTALL, TEST, TRAFFICROLLOUT)
    steps = (
        take(START, why),
        take(INSTALL, "the release and its install jobs, at the version asked for"),
        take(TEST, "the chart's tests must pass before the service takes traffic"),
        rollout(traffic, "the new release has its traffic from the start (the gate mode): the rollout finds it in place "
                         "and ends the flow, Operational" if traffic.gated
                else "the new service gets its traffic, and the rollout ends the flow: Operational"),
        take(END, "no traffic step: the flow ends here, Operational") if traffic.skipped
        else leave_out(END, "the traffic rollout ends the flow"),
    )
    return Plan(GREENFIELD, steps, planned=planned)


def undo() -> Plan:
    """The install or the test failed: the service never took traffic."""
    return Plan(GREENFIELD, (
        take(UNINSTALL, "the unhealthy service is uninstalled, without a drain (it never took traffic), its "
                        "database dropped so that a corrected greenfield starts clean"),
        take(END, "the flow ends Failed, the service Removed"),
    ))
