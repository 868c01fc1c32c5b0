"""keystone's rolling update on the stock chart, as an operator runs it with
playbooks/update.yml, with the infrastructure beside it (support/osh_flows.py):

- a check that fails refuses the update with its output, and nothing changes;
- a check that warns lets it go on, with the warning shown;
- the update checks, backs up and expands the database, rolls the pods while
  the traffic flows (the Service's ready endpoints never drop to zero), then,
  once no pod of the old release is left, runs the contract, and tests;
- a rollback before the contract restores nothing and keeps the traffic;
  one after the contract started restores the database.

What the pods did is read from a watch on them (support/pod_events.py), the
endpoints from a watch on the Service's EndpointSlices, the order from the
Jobs' and pods' own timestamps. The tests run in order on one keystone.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import pytest
from kubernetes import dynamic

from support import bed_faults, osh_flows
from support.endpoint_watch import EndpointWatch
from support.osh_flows import IMAGE, Site, failed, keystone_values, ok
from support.pod_events import PodEvents
from support.site_run import when

pytestmark = pytest.mark.bed

API_PODS = "application=keystone,component=api"
# Rolled one pod at a time, a new one Ready before an old one goes: the
# chart's own rolling-update values, set as an operator sets them for a
# zero-downtime update.
ROLLING = {"pod": {"replicas": {"api": 2},
                   "lifecycle": {"upgrades": {"deployments": {"rolling_update": {"max_unavailable": 0, "max_surge": 1}}}}}}


def values(version: str) -> Dict[str, Any]:
    return keystone_values(version, **ROLLING)


@pytest.fixture(scope="module")
def site(kubeconfig: str, dyn: dynamic.DynamicClient, crds: None) -> Iterator[Site]:
    yield from osh_flows.deployed(kubeconfig, dyn, "roll")


def _ran(record: Dict[str, Any]) -> List[str]:
    """The types of the Phases the record's flow ran, in order (their names are <release>-<type>-<hash>)."""
    return [name.rsplit("-", 2)[1] for name in record["flow"].get("phases") or []]


def _jobs(site: Site, phase: Dict[str, Any]) -> List[str]:
    return [o["name"] for o in phase["status"].get("objects") or [] if o["kind"] == "Job"]


def test_keystone_deploys(site: Site) -> None:
    ok(site.flow("greenfield.yml", "keystone", version="2025.2", values=values("2025.2")))
    assert site.lifecycle("keystone")["currentVersion"] == "2025.2"


def test_a_failed_check_refuses_the_update_with_its_output_and_nothing_changes(site: Site) -> None:
    before = site.release("keystone")["version"]
    bed_faults.set_fault(site.dyn, site.namespace, "keystone-db-sync-check",
                         "exit 2: Check: Fernet keys | Result: Failure | Details: keys are not readable")
    try:
        out = failed(site.flow("update.yml", "keystone", version="2026.1", values=values("2026.1")))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "keystone-db-sync-check")
    assert "refused by its upgrade checks, nothing changed" in out
    assert "exited 2: Check: Fernet keys | Result: Failure | Details: keys are not readable" in out
    # Nothing of the service changed: its release, its image, its record's version; no drain, no upgrade.
    assert site.release("keystone")["version"] == before
    assert site.api_image() == IMAGE.format("2025.2")
    record = site.lifecycle("keystone")
    assert (record["state"], record["currentVersion"], record["flow"]["state"]) == ("Operational", "2025.2", "Failed")
    assert not site.phases("keystone", "upgrade") and not site.phases("keystone", "trafficdrain")
    (check,) = site.phases("keystone", "check")
    assert check["status"]["state"] == "Failed"
    # The check read copies of the new release's config; the running service's are its own.
    assert site.get("v1", "ConfigMap", "keystone-etc-check") is not None or site.get("v1", "Secret", "keystone-etc-check")
    assert site.ready_endpoints("keystone-api") == 2


def test_the_rolling_update_expands_rolls_without_downtime_then_contracts(site: Site) -> None:
    bed_faults.set_fault(site.dyn, site.namespace, "keystone-db-sync-check",
                         "exit 1: Check: Trust flush | Result: Warning | Details: run keystone-manage trust_flush")
    try:
        with EndpointWatch(site.dyn, site.namespace, ["keystone-api"]) as endpoints, \
                PodEvents(site.dyn, site.namespace, API_PODS) as pods:
            run = site.flow("update.yml", "keystone", version="2026.1", values=values("2026.1"))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "keystone-db-sync-check")
    ok(run)
    out = run.stdout
    assert "passed with a warning (exit 1): Check: Trust flush | Result: Warning" in out
    # Zero downtime: never a moment without a ready endpoint.
    assert endpoints.min_ready("keystone-api") >= 1, endpoints.timeline("keystone-api")
    assert not endpoints.zero_spans("keystone-api")
    record = site.lifecycle("keystone")
    assert (record["state"], record["currentVersion"], record["flow"]["state"]) == ("Operational", "2026.1", "Succeeded")
    assert _ran(record) == ["check", "upgrade", "contract", "test"]
    assert not site.phases("keystone", "trafficdrain")
    # The order of the steps, from the objects' own timestamps.
    expand = site.get("batch/v1", "Job", "keystone-db-sync-expand")
    contract = site.get("batch/v1", "Job", "keystone-db-sync-contract")
    assert expand and contract
    assert expand["spec"]["template"]["spec"]["containers"][0]["command"] == ["keystone-manage", "db_sync", "--expand"]
    assert contract["spec"]["template"]["spec"]["containers"][0]["command"] == [
        "keystone-manage", "db_sync", "--contract"]
    new = [p for p in pods.all() if p.image == IMAGE.format("2026.1")]
    old = [p for p in pods.all() if p.image == IMAGE.format("2025.2")]
    assert new and old and all(p.gone for p in old), pods.all()
    expanded = when(expand["status"]["completionTime"])
    assert expanded <= min(p.created for p in new), "the expand Job completed before the first new pod"
    assert when(contract["metadata"]["creationTimestamp"]) >= max(p.gone for p in old), \
        "the contract Job was created once the last old pod was gone"
    # The chart's own db-sync ran in the contract, before the contract Job.
    (phase,) = site.phases("keystone", "contract")
    assert _jobs(site, phase) == ["keystone-db-sync", "keystone-db-sync-contract"]


def test_a_rollback_before_the_contract_restores_nothing_and_keeps_the_traffic(site: Site) -> None:
    bed_faults.set_fault(site.dyn, site.namespace, "keystone-db-sync-expand",
                         "exit 1: (pymysql.err.OperationalError) Duplicate column name")
    try:
        with EndpointWatch(site.dyn, site.namespace, ["keystone-api"]) as endpoints:
            out = failed(site.flow("update.yml", "keystone", version="2026.2", values=values("2026.2")))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "keystone-db-sync-expand")
    assert "Duplicate column name" in out
    assert endpoints.min_ready("keystone-api") >= 1
    record = site.lifecycle("keystone")
    assert (record["currentVersion"], record["flow"]["state"]) == ("2026.1", "RolledBack")
    ran = _ran(record)
    assert ran == ["check", "upgrade", "rollback", "test"], ran  # no drain, no rollout
    rollback = site.phases("keystone", "rollback")[-1]
    assert not rollback["spec"].get("rollback", {}).get("restoreDatabase")
    assert not [j for j in _jobs(site, rollback) if j.endswith("-db-restore")]
    assert site.api_image() == IMAGE.format("2026.1")


def test_a_rollback_after_the_contract_started_restores_the_database(site: Site) -> None:
    bed_faults.set_fault(site.dyn, site.namespace, "keystone-db-sync-contract",
                         "exit 1: (pymysql.err.OperationalError) Cannot drop column")
    try:
        out = failed(site.flow("update.yml", "keystone", version="2026.2", values=values("2026.2")))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "keystone-db-sync-contract")
    assert "Cannot drop column" in out
    record = site.lifecycle("keystone")
    assert (record["currentVersion"], record["flow"]["state"]) == ("2026.1", "RolledBack")
    ran = _ran(record)
    assert ran == ["check", "upgrade", "contract", "trafficdrain", "rollback", "trafficrollout", "test"], ran
    rollback = site.phases("keystone", "rollback")[-1]
    assert rollback["spec"]["rollback"]["restoreDatabase"] is True
    assert [j for j in _jobs(site, rollback) if j.endswith("-db-restore")]
    assert site.api_image() == IMAGE.format("2026.1")
