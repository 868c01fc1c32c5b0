"""The flows end to end on the stock openstack-helm charts, as an operator runs
them: mariadb (with its backup CronJob), memcached and rabbitmq installed;
keystone through greenfield, a drain update (a new image tag and a changed
value), a drain update whose db-sync breaks, rollback with the database restored, remove
with a purge, and greenfield again; placement next to it through the same
flows.

Each flow is one `ansible-playbook` run of the shipped playbooks, as the
account docs/rbac.md sets up for one namespace: a ServiceAccount's token in
K8S_AUTH_*, bound with exactly the documented commands (support/
runner_account.py reads them from the docs). The infrastructure is installed,
and what the cluster holds afterwards is checked, with the administrator's
kubeconfig: the Helm release, the ServiceLifecycle, the Phases and what they
ran, the Service's endpoints, the update status. The tests run in order and
share one namespace, as a site's services do.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

import pytest
from kubernetes import dynamic

from support import bed_faults, kube, osh_flows
from support.osh_flows import GROUP, IMAGE, KEYSTONE_INSTALL_JOBS, Site, failed, keystone_values, ok

pytestmark = pytest.mark.bed


@pytest.fixture(scope="module")
def site(kubeconfig: str, dyn: dynamic.DynamicClient, crds: None) -> Iterator[Site]:
    yield from osh_flows.deployed(kubeconfig, dyn, "osh")


def test_greenfield_runs_every_job_of_the_chart_in_its_declared_order(site: Site) -> None:
    run = site.flow("greenfield.yml", "keystone", version="2026.1", values=keystone_values("2026.1"))
    ok(run)
    # The runner may not read namespaces (docs/rbac.md): the flow says it took this one as it is.
    assert f"The credentials may not read namespaces: {site.namespace} is taken to exist" in run.stdout
    assert "was not refreshed" not in run.stdout

    (install,) = site.phases("keystone", "install")
    assert install["status"]["state"] == "Succeeded"
    jobs = {o["name"] for o in install["status"]["objects"] if o["kind"] == "Job"}
    assert KEYSTONE_INSTALL_JOBS <= jobs
    # The release itself runs none of them: no Helm hook Job is left to Helm.
    manifest_jobs = {j["metadata"]["name"] for j in site.items("batch/v1", "Job", "application=keystone")
                     if "helm.sh/hook" in (j["metadata"].get("annotations") or {})
                     and not (j["metadata"].get("labels") or {}).get("lifecycle.openstack.org/phase")}
    assert manifest_jobs == set()
    # db-sync ran after db-init completed, bootstrap after keystone-api served.
    started = {j["metadata"]["name"]: j["status"].get("startTime") for j in site.items("batch/v1", "Job")}
    completed = {j["metadata"]["name"]: j["status"].get("completionTime") for j in site.items("batch/v1", "Job")}
    assert completed["keystone-db-init"] <= started["keystone-db-sync"]
    assert completed["keystone-db-sync"] <= started["keystone-bootstrap"] or \
        completed["keystone-db-sync"] <= started["keystone-domain-manage"]

    record = site.lifecycle("keystone")
    assert (record["state"], record["currentVersion"]) == ("Operational", "2026.1")
    assert site.ready_endpoints("keystone-api") >= 1
    # The runner wrote the cluster-wide update status, its service's entry in it.
    status = (site.dyn.resources.get(api_version=GROUP, kind="UpdateStatus").get(name="cluster")
              .to_dict().get("status") or {})
    (entry,) = [e for e in status.get("services") or [] if e.get("namespace") == site.namespace]
    assert (entry["name"], entry["state"]) == ("keystone", "Operational")


def test_deleting_every_phase_leaves_keystone_running(site: Site) -> None:
    phases = site.dyn.resources.get(api_version=GROUP, kind="Phase")
    for p in site.phases("keystone"):
        phases.delete(name=p["metadata"]["name"], namespace=site.namespace, propagation_policy="Foreground")
    kube.wait_for_gone(site.dyn, GROUP, "Phase", site.namespace, "lifecycle.openstack.org/service=keystone")

    # Every Secret and ConfigMap keystone-api mounts (the kept fernet and
    # credential keys among them) is still there.
    pod = (site.get("apps/v1", "Deployment", "keystone-api") or {})["spec"]["template"]["spec"]
    mounted = {("Secret", v["secret"]["secretName"]) for v in pod["volumes"] if "secret" in v}
    mounted |= {("ConfigMap", v["configMap"]["name"]) for v in pod["volumes"] if "configMap" in v}
    assert {("Secret", "keystone-fernet-keys"), ("Secret", "keystone-credential-keys")} <= mounted
    for kind, name in sorted(mounted):
        assert site.get("v1", kind, name) is not None, f"{kind} {name} is gone"
    for name in ("keystone-db-sync", "keystone-fernet-setup", "keystone-credential-setup"):
        assert site.get("batch/v1", "Job", name) is not None, f"Job {name} is gone"
    assert site.ready_endpoints("keystone-api") >= 1


def test_update_changes_the_image_and_a_value_after_a_backup(site: Site) -> None:
    values = keystone_values("2026.2", conf={"keystone": {"DEFAULT": {"max_param_size": 128}}})
    ok(site.flow("update.yml", "keystone", version="2026.2", values=values, update_strategy="drain"))

    assert site.api_image() == IMAGE.format("2026.2")
    (upgrade,) = site.phases("keystone", "upgrade")
    assert upgrade["status"]["state"] == "Succeeded"
    assert upgrade["status"].get("backupRef")
    assert (upgrade["status"].get("backupSource") or {}).get("cronjob") == "mariadb-backup"
    jobs = {o["name"] for o in upgrade["status"]["objects"] if o["kind"] == "Job"}
    assert "keystone-db-sync" in jobs and any(j.endswith("-db-backup") for j in jobs)
    record = site.lifecycle("keystone")
    assert (record["state"], record["currentVersion"]) == ("Operational", "2026.2")
    assert site.release("keystone")["version"] == 2


def test_a_broken_db_sync_fails_fast_is_stopped_and_rolled_back(site: Site) -> None:
    bed_faults.set_fault(site.dyn, site.namespace, "keystone-db-sync",
                         "keystone-manage db_sync: (pymysql.err.OperationalError) Unknown column")
    try:
        out = failed(site.flow("update.yml", "keystone", version="2026.3", values=keystone_values("2026.3"),
                               update_strategy="drain"))
    finally:
        bed_faults.clear_fault(site.dyn, site.namespace, "keystone-db-sync")

    assert "Unknown column" in out and "exit" in out.lower()
    broken = [p for p in site.phases("keystone", "upgrade") if p["status"]["state"] == "Failed"]
    assert broken and broken[-1]["status"].get("reason") == "FailureThreshold"
    stopped = {s["name"] for s in broken[-1]["status"].get("stoppedJobs") or []}
    assert "keystone-db-sync" in stopped
    job = site.get("batch/v1", "Job", "keystone-db-sync") or {}
    assert job.get("spec", {}).get("suspend") is True or job.get("metadata", {}).get("labels", {}).get(
        "lifecycle.openstack.org/phase") != broken[-1]["metadata"]["name"]
    # The release was never upgraded: the failed migration came first.
    assert site.api_image() == IMAGE.format("2026.2")
    record = site.lifecycle("keystone")
    assert record["currentVersion"] == "2026.2"
    assert site.ready_endpoints("keystone-api") >= 1


def test_rollback_returns_to_the_first_version_and_restores_its_database(site: Site) -> None:
    ok(site.flow("rollback.yml", "keystone", version="2026.1", values=keystone_values("2026.1")))

    assert site.api_image() == IMAGE.format("2026.1")
    # The newest rollback Phase is this flow's (the broken update's rescue ran one too).
    rollback = site.phases("keystone", "rollback")[-1]
    assert rollback["status"]["state"] == "Succeeded"
    jobs = {o["name"] for o in rollback["status"]["objects"] if o["kind"] == "Job"}
    assert any(j.endswith("-db-restore") for j in jobs), jobs
    # The database goes back to what it was at revision 1: the backup of the
    # upgrade that left it, not the newer one the broken update took at 2026.2.
    backups = {p["spec"].get("releaseRevision"): p["status"]["backupRef"]
               for p in site.phases("keystone", "upgrade") if p["status"].get("backupRef")}
    assert set(backups) == {1, 2}
    assert rollback["spec"]["rollback"]["backupRef"] == backups[1]
    record = site.lifecycle("keystone")
    assert (record["state"], record["currentVersion"]) == ("Operational", "2026.1")


def test_remove_with_purge_then_greenfield_again(site: Site) -> None:
    ok(site.flow("remove.yml", "keystone", purge_database=True))
    assert site.release("keystone") == {}
    assert site.lifecycle("keystone")["state"] == "Removed"
    (uninstall,) = site.phases("keystone", "uninstall")
    assert "keystone-db-drop" in {o["name"] for o in uninstall["status"]["objects"] if o["kind"] == "Job"}
    # The purge took the keys Helm keeps: the next greenfield creates them anew.
    assert site.get("v1", "Secret", "keystone-fernet-keys") is None

    ok(site.flow("greenfield.yml", "keystone", version="2026.1", values=keystone_values("2026.1")))
    assert site.lifecycle("keystone")["state"] == "Operational"
    assert site.ready_endpoints("keystone-api") >= 1


def placement_values(version: str, **extra: Any) -> Dict[str, Any]:
    tag = f"quay.io/airshipit/placement:{version}-ubuntu_noble"
    values: Dict[str, Any] = {"images": {"tags": {"placement": tag, "placement_db_sync": tag}}}
    values.update(extra)
    return values


def placement_image(site: Site) -> str:
    deployment = site.get("apps/v1", "Deployment", "placement-api") or {}
    return deployment["spec"]["template"]["spec"]["containers"][0]["image"]


def test_placement_beside_keystone_through_every_flow(site: Site) -> None:
    """placement, next to the keystone it registers with: greenfield, update
    (an image tag and a value), rollback with its database restored, remove
    with a purge, and greenfield again, as the same runner."""
    ok(site.flow("greenfield.yml", "placement", version="2026.1", values=placement_values("2026.1")))
    record = site.lifecycle("placement")
    assert (record["state"], record["currentVersion"]) == ("Operational", "2026.1")
    (install,) = site.phases("placement", "install")
    jobs = {o["name"] for o in install["status"]["objects"] if o["kind"] == "Job"}
    assert {"placement-db-init", "placement-db-sync", "placement-ks-service", "placement-ks-user",
            "placement-ks-endpoints"} <= jobs
    assert site.ready_endpoints("placement-api") >= 1

    values = placement_values("2026.2", conf={"placement": {"DEFAULT": {"debug": True}}})
    ok(site.flow("update.yml", "placement", version="2026.2", values=values, update_strategy="drain"))
    assert placement_image(site).endswith(":2026.2-ubuntu_noble")
    (upgrade,) = site.phases("placement", "upgrade")
    assert upgrade["status"].get("backupRef")
    assert site.lifecycle("placement")["currentVersion"] == "2026.2"

    ok(site.flow("rollback.yml", "placement", version="2026.1", values=placement_values("2026.1")))
    assert placement_image(site).endswith(":2026.1-ubuntu_noble")
    (rollback,) = site.phases("placement", "rollback")
    assert any(o["name"].endswith("-db-restore") for o in rollback["status"]["objects"] if o["kind"] == "Job")
    assert site.lifecycle("placement")["currentVersion"] == "2026.1"

    ok(site.flow("remove.yml", "placement", purge_database=True))
    assert site.release("placement") == {}
    (uninstall,) = site.phases("placement", "uninstall")
    assert "placement-db-drop" in {o["name"] for o in uninstall["status"]["objects"] if o["kind"] == "Job"}

    ok(site.flow("greenfield.yml", "placement", version="2026.1", values=placement_values("2026.1")))
    assert site.lifecycle("placement")["state"] == "Operational"
    assert site.ready_endpoints("placement-api") >= 1
    # keystone, beside it all along, is untouched.
    assert site.lifecycle("keystone")["state"] == "Operational"
    assert site.ready_endpoints("keystone-api") >= 1
