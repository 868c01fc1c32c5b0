# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The update flow's table: move a running service to a new version.

- It always needs Helm's word (the preview of the release): read_release.
- Nothing to do: Operational at the version asked for, and Helm would not
  change the release (same chart, same values).
- Refused, before anything is read from the release: a move between
  OpenStack releases that the projects do not support (common/openstack_release.py:
  N -> N+1 or SLURP -> SLURP), or any move back (the rollback flow's).
- Refused, before anything is written: there is no Helm release to update;
  update_strategy rolling for a project that does not support rolling
  upgrades, or without expand commands.
- Otherwise the strategy's steps, between the flow's start (which records the
  revision the service runs, the one a failure rolls back to) and its end.
  Both begin with the project's upgrade checks (check), with the new
  release's image and config, before anything changes; a failed check ends
  the flow Failed with the service Operational where it was.

  - rolling (the default where the project supports rolling upgrades,
    common/openstack_upgrade.py): check -> upgrade (backup, expand, then the
    release, its pods rolled while the traffic flows) -> contract (once no
    pod of the old release is left: the chart's db-sync, online migrations,
    contract) -> test. No drain, so no rollout either.
  - drain (every other project, or asked): check -> drain -> upgrade (backup,
    then the chart's db-sync as the chart defines it, then the release) ->
    traffic rollout -> test.

  The drain is left out without traffic (traffic_backend none), and on a
  re-run of this update to this version that had rolled the traffic out to
  the new version already (it was interrupted in the test): closing the gate
  again would only cut the service off. A re-run of an update that had begun
  to roll back drains again.
- Undone when the upgrade, the contract, the rollout or the test fails: the
  rollback chain (rollback.chain) back to the revision the flow started
  from. The database is restored when restore_database is set, the upgrade
  took a backup, and the schema moved past what the old release runs on: a
  drain update's db-sync, or a rolling update's contract once it started.
  Before a rolling update's contract, the expanded schema still serves the
  old release: the rollback is Helm's alone, and it keeps the traffic. The
  flow ends RolledBack. A failed drain is not undone: the flow is Failed.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import openstack_release, openstack_upgrade
from ansible_collections.lcm.openstack.plugins.module_utils.common.openstack_upgrade import Steps as Upgrade
from ansible_collections.lcm.openstack.plugins.module_utils.flows import rollback
from ansible_collections.lcm.openstack.plugins.module_utils.flows.steps import (
    CHECK, CONTRACT, END, REFUSE, ROLLBACK, START, TEST, TRAFFICDRAIN, TRAFFICROLLOUT, UPDATE, UPGRADE, Plan, Record,
    Release, RollbackTo, Service, Step, Traffic, flow, leave_out, nothing, operational_at, ran, read_release,
    resumed, rollout, succeeded, take, BEFORE_CONTRACT, before_contract,
)

DRAIN, ROLLING, AUTO = openstack_upgrade.DRAIN, openstack_upgrade.ROLLING, openstack_upgrade.AUTO

# A strategy: the phase types the start plans, and the steps between the start and the end.
Strategy = Callable[[Record, Service, Traffic, Upgrade], Tuple[Tuple[str, ...], Tuple[Step, ...]]]


def drain_step(record: Record, service: Service, traffic: Traffic) -> Step:
    if traffic.skipped:
        return leave_out(TRAFFICDRAIN, traffic.skipped)
    if (resumed(record, UPDATE, service.version) and succeeded(record, TRAFFICROLLOUT)
            and ROLLBACK not in [ptype for ptype, _result in ran(record)]):
        return leave_out(TRAFFICDRAIN, "this update had rolled the traffic out to the new version already: "
                                       "draining it again would only cut the service off")
    return take(TRAFFICDRAIN, "the traffic is off while the database and the release change")


def _commands(jobs: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(" ".join(j["command"]) for j in jobs)


def check_step(service: Service, upgrade: Upgrade) -> Step:
    jobs = upgrade.jobs.get("check") or []
    if not jobs:
        return leave_out(CHECK, f"no upgrade check is known for {upgrade.project} "
                                f"({openstack_upgrade.INPUT}.{upgrade.project}.check gives one)")
    return take(CHECK, f"{_commands(jobs)}, with {service.version}'s image and config, before anything changes")


def _drain(record: Record, service: Service, traffic: Traffic,
           upgrade: Upgrade) -> Tuple[Tuple[str, ...], Tuple[Step, ...]]:
    check = check_step(service, upgrade)
    return ((CHECK,) if check.run else ()) + (TRAFFICDRAIN, UPGRADE, TRAFFICROLLOUT, TEST), (
        check,
        drain_step(record, service, traffic),
        take(UPGRADE, f"the release to {service.version}, its database backed up first, then the chart's "
                      "db-sync as the chart defines it"),
        rollout(traffic, "the upgraded service gets its traffic back"),
        take(TEST, "the chart's tests, through the Service as any client"),
    )


def _rolling(record: Record, service: Service, traffic: Traffic,
             upgrade: Upgrade) -> Tuple[Tuple[str, ...], Tuple[Step, ...]]:
    check = check_step(service, upgrade)
    after = upgrade.jobs.get("online", []) + upgrade.jobs.get("contract", [])
    keep = "the traffic keeps flowing while the pods roll (update_strategy rolling)"
    return ((CHECK,) if check.run else ()) + (UPGRADE, CONTRACT, TEST), (
        check,
        leave_out(TRAFFICDRAIN, keep),
        take(UPGRADE, f"its database backed up, then expanded ({_commands(upgrade.jobs['expand'])}) while the old "
                      f"release runs, then the release to {service.version}, its pods rolled while the traffic flows"),
        take(CONTRACT, "once no pod of the old release is left: the chart's db-sync"
                       + (f", then {_commands(after)}" if after else "")),
        leave_out(TRAFFICROLLOUT, keep),
        take(TEST, "the chart's tests, through the Service as any client"),
    )


STRATEGIES: Dict[str, Strategy] = {DRAIN: _drain, ROLLING: _rolling}


def decide(record: Record, service: Service, traffic: Traffic, release: Optional[Release],
           strategy: str = AUTO, upgrade: Optional[Upgrade] = None) -> Plan:
    upgrade = upgrade or openstack_upgrade.steps(service.service)
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
    chosen, why = openstack_upgrade.choose(strategy, service.service, upgrade)
    if not chosen:
        return Plan(UPDATE, (take(REFUSE, why),), message=why)
    planned, steps = STRATEGIES[chosen](record, service, traffic, upgrade)
    start = take(START, f"{service.service} runs revision {release.revision}: a failure rolls back to it; "
                        f"strategy {chosen}: {why}")
    end = take(END, "every step passed: the flow ends, Operational")
    jobs = {CHECK: upgrade.jobs.get("check", [])}
    if chosen == ROLLING:
        jobs.update(expand=upgrade.jobs.get("expand", []),
                    contract=upgrade.jobs.get("online", []) + upgrade.jobs.get("contract", []))
    return Plan(UPDATE, (start,) + steps + (end,), planned=planned, from_revision=release.revision,
                strategy=chosen, jobs=jobs)


def undo(record: Record, traffic: Traffic, restore_database: bool, backup_ref: str) -> Plan:
    """The upgrade, the rollout or the test failed: back to the revision the
    flow started from, as the record says now."""
    revision = int(flow(record).get("from_revision") or 0)
    if before_contract(record):
        to = RollbackTo(revision=revision, restore=False)
        steps = rollback.chain(record, UPDATE, traffic, to, keep_traffic=BEFORE_CONTRACT)
    else:
        to = RollbackTo(revision=revision, restore=restore_database and bool(backup_ref))
        steps = rollback.chain(record, UPDATE, traffic, to)
    steps += (
        take(END, "the flow ends RolledBack, the service Operational at the revision it started from"),)
    return Plan(UPDATE, steps, rollback=to, traffic_backend=traffic.backend)
