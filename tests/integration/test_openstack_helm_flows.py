"""The flows end to end on the stock openstack-helm charts, as an operator runs
them: mariadb (with its backup CronJob), memcached and rabbitmq installed;
keystone through greenfield, update (a new image tag and a changed value),
an update whose db-sync breaks, rollback with the database restored, remove
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

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest
from kubernetes import dynamic

from support import bed_faults, kube, openstack_helm, runner_account
from support.ansible import ROOT

pytestmark = pytest.mark.bed

GROUP = "lifecycle.openstack.org/v1alpha1"
BIN = Path(sys.executable).parent
IMAGE = "quay.io/airshipit/keystone:{}-ubuntu_noble"
# The jobs the stock keystone chart renders for an install, each of which the
# install phase must run (none left to Helm hooks).
KEYSTONE_INSTALL_JOBS = {
    "keystone-db-init", "keystone-db-sync", "keystone-rabbit-init", "keystone-credential-setup",
    "keystone-fernet-setup", "keystone-domain-manage", "keystone-bootstrap",
}


def keystone_values(version: str, **extra: Any) -> Dict[str, Any]:
    """keystone at one version: the API and db-sync images of that tag."""
    tag = IMAGE.format(version)
    values: Dict[str, Any] = {"images": {"tags": {"keystone_api": tag, "keystone_db_sync": tag}}}
    values.update(extra)
    return values


class Site:
    """One namespace with the infrastructure, and the flows run in it."""

    def __init__(self, kubeconfig: str, dyn: dynamic.DynamicClient, namespace: str) -> None:
        self.kubeconfig, self.dyn, self.namespace = kubeconfig, dyn, namespace
        runner_account.grant_documented(kubeconfig, namespace)
        self.credential = runner_account.credential_env(dyn, kubeconfig, namespace)

    def flow(self, playbook: str, service: str, **extra: Any) -> subprocess.CompletedProcess:
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", HELM_BIN=openstack_helm.helm_bin(),
                   ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
        env.update(self.credential)
        env.pop("KUBECONFIG")  # the runner has its token, not the administrator's kubeconfig
        chart = str(openstack_helm.chart(service))
        variables = {"service": service, "openstack_namespace": self.namespace, "chart": chart, "phase_timeout": 600}
        variables.update(extra)
        cmd = [str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
               str(ROOT / "playbooks" / playbook), "-e", json.dumps(variables)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)

    def items(self, api_version: str, kind: str, selector: str = "") -> List[Dict[str, Any]]:
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        return res.get(namespace=self.namespace, label_selector=selector or None).to_dict()["items"]

    def get(self, api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        return kube.get_or_none(self.dyn, api_version, kind, name, self.namespace)

    def lifecycle(self, service: str) -> Dict[str, Any]:
        return (self.get(GROUP, "ServiceLifecycle", service) or {}).get("status") or {}

    def phases(self, service: str, type_: str = "") -> List[Dict[str, Any]]:
        selector = f"lifecycle.openstack.org/service={service}"
        if type_:
            selector += f",lifecycle.openstack.org/phase-type={type_}"
        found = self.items(GROUP, "Phase", selector)
        return sorted(found, key=lambda p: p["metadata"]["creationTimestamp"])

    def release(self, name: str) -> Dict[str, Any]:
        out = subprocess.run([openstack_helm.helm_bin(), "status", name, "-n", self.namespace, "-o", "json"],
                             env=dict(os.environ, KUBECONFIG=self.kubeconfig), capture_output=True, text=True,
                             check=False)
        return json.loads(out.stdout) if out.returncode == 0 else {}

    def api_image(self) -> str:
        deployment = self.get("apps/v1", "Deployment", "keystone-api") or {}
        return deployment["spec"]["template"]["spec"]["containers"][0]["image"]

    def ready_endpoints(self, service: str) -> int:
        slices = self.items("discovery.k8s.io/v1", "EndpointSlice", f"kubernetes.io/service-name={service}")
        return sum(1 for s in slices for e in s.get("endpoints") or []
                   if (e.get("conditions") or {}).get("ready"))


def ok(run: subprocess.CompletedProcess) -> None:
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]


def failed(run: subprocess.CompletedProcess) -> str:
    assert run.returncode != 0, run.stdout[-4000:]
    return run.stdout + run.stderr


@pytest.fixture(scope="module")
def site(kubeconfig: str, dyn: dynamic.DynamicClient, crds: None) -> Iterator[Site]:
    name = f"osh-{uuid.uuid4().hex[:6]}"
    openstack_helm.install(kubeconfig, "mariadb", name, openstack_helm.MARIADB_BACKUP)
    openstack_helm.install_infrastructure(kubeconfig, name)
    yield Site(kubeconfig, dyn, name)
    dyn.resources.get(api_version="v1", kind="Namespace").delete(name=name)
    dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="ClusterRoleBinding").delete(
        name=f"{name}-{runner_account.ACCOUNT}")


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
    ok(site.flow("update.yml", "keystone", version="2026.2", values=values))

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
        out = failed(site.flow("update.yml", "keystone", version="2026.3", values=keystone_values("2026.3")))
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
    ok(site.flow("update.yml", "placement", version="2026.2", values=values))
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
