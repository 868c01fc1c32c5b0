# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollback flow's table, and the rollback chain it shares with a failed update.

The flow: drain -> rollback (database restore) -> traffic rollout -> test.

- Nothing to do: no revision asked for (to_revision 0, the previous deployed
  one), and the last flow was a rollback that Succeeded with the service
  Operational: rolling back again would undo it.
- Before the start, the rollback role finds the backup it restores, or
  refuses (no release, no such revision, no backup): find_backup.
- A failure is not undone: the flow is Failed.

The chain (chain()), as the rollback flow and a failed update run it: the
drain is left out without traffic, and on a re-run of the same flow, still
Running, that had rolled the traffic out after its rollback Succeeded (it was
interrupted in the test); the rollout is left out without traffic.
"""

from __future__ import annotations

from typing import Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    BEFORE_CONTRACT, END, FIND_BACKUP, OPERATIONAL, ROLLBACK, ROLLBACK_FLOW, START, SUCCEEDED, TEST, TRAFFICDRAIN, TRAFFICROLLOUT,
    Plan, Record, RollbackTo, Service, Step, Traffic, before_contract, flow, leave_out, nothing, resumed, rollout, state, succeeded,
    take,
)


def chain(record: Record, flow_name: str, traffic: Traffic, to: RollbackTo, keep_traffic: str = "") -> Tuple[Step, ...]:
    """Close the gate, return the service to `to`, give it its traffic back, test it.
    `record` is the service's record as the chain starts, `flow_name` the flow that runs it.
    `keep_traffic`: why the traffic is not touched (a rollback before a rolling update's contract)."""
    if keep_traffic:
        drain = leave_out(TRAFFICDRAIN, keep_traffic)
    elif traffic.skipped:
        drain = leave_out(TRAFFICDRAIN, traffic.skipped)
    elif resumed(record, flow_name) and succeeded(record, TRAFFICROLLOUT, after=ROLLBACK):
        drain = leave_out(TRAFFICDRAIN, f"this {flow_name} had rolled the traffic out after its rollback already: "
                                        "draining it again would only cut the service off")
    else:
        drain = take(TRAFFICDRAIN, "the traffic is off while the database and the release change")
    where = f"revision {to.revision}" if to.revision else "the previous deployed revision"
    database = "its database restored" if to.restore else "its database as it is"
    return (
        drain,
        take(ROLLBACK, f"back to {where}, {database}" + (" (before the contract)" if keep_traffic else "")),
        leave_out(TRAFFICROLLOUT, keep_traffic) if keep_traffic
        else rollout(traffic, "the rolled-back service gets its traffic back"),
        take(TEST, "the rolled-back service's tests, through the Service as any client"),
    )


def done(record: Record, to_revision: int) -> bool:
    current = flow(record)
    return (to_revision == 0 and state(record) == OPERATIONAL
            and current.get("name") == ROLLBACK_FLOW and current.get("state") == SUCCEEDED)


def decide(record: Record, service: Service, traffic: Traffic, to_revision: int, restore_database: bool) -> Plan:
    if done(record, to_revision):
        return nothing(ROLLBACK_FLOW, f"The last rollback of {service.service} succeeded and it is Operational; "
                                      "give to_revision to roll back further.")
    # The last flow a rolling update that stopped before its contract: the
    # schema still serves the old release, and nothing is restored.
    keep = BEFORE_CONTRACT if restore_database and before_contract(record) else ""
    to = RollbackTo(revision=to_revision, restore=restore_database and not keep, version=service.version)
    steps = (
        take(FIND_BACKUP, "the release, the revision and the backup are found before anything changes, or refused"),
        take(START, "a rollback asked for"),
    ) + chain(record, ROLLBACK_FLOW, traffic, to, keep_traffic=keep) + (
        take(END, "every step passed: the flow ends, Operational"),
    )
    return Plan(ROLLBACK_FLOW, steps, planned=(TRAFFICDRAIN, ROLLBACK, TRAFFICROLLOUT, TEST), rollback=to,
                traffic_backend=traffic.backend)
