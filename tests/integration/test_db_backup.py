"""The backup and restore Jobs made from the stock mariadb chart's backup
CronJob (plugins/module_utils/phase/db_backup.py), on the bed: the apiserver takes
them, and their pods start with the CronJob's account, volumes and claim,
after the entrypoint gate let them through. And the upgrade and rollback
phases of the stock nova chart, whose db-init creates three databases (cell0
read from a Secret), back up and restore all three."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from kubernetes import dynamic

from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_cronjob, db_backup
from support import kube, openstack_helm
from support.ansible import run_module

pytestmark = pytest.mark.bed

REF = "keystone-2025-2-0a1b2c3d"
GROUP = "lifecycle.openstack.org/v1alpha1"
NOVA = ["nova", "nova_cell0", "nova_cell1"]


def _pods(dyn: dynamic.DynamicClient, namespace: str, job: str) -> List[Dict[str, Any]]:
    res = dyn.resources.get(api_version="v1", kind="Pod")
    return res.get(namespace=namespace, label_selector=f"batch.kubernetes.io/job-name={job}").to_dict()["items"]


def _run(dyn: dynamic.DynamicClient, namespace: str, body: Dict[str, Any]) -> Dict[str, Any]:
    """Dry run, then create, then wait for the Job to complete; its pod."""
    jobs = dyn.resources.get(api_version="batch/v1", kind="Job")
    checked = jobs.create(body=body, namespace=namespace, dry_run="All").to_dict()
    assert checked["metadata"]["name"] == body["metadata"]["name"]
    assert not _pods(dyn, namespace, body["metadata"]["name"])  # the dry run made nothing
    jobs.create(body=body, namespace=namespace)
    job = kube.wait_for(dyn, "batch/v1", "Job", body["metadata"]["name"], namespace,
                        kube.has_condition("Complete"), timeout=120)
    assert not job["metadata"].get("ownerReferences")
    (pod,) = _pods(dyn, namespace, body["metadata"]["name"])
    return pod


def test_jobs_from_the_mariadb_backup_cronjob_start_with_its_volumes(dyn, kubeconfig, namespace) -> None:
    openstack_helm.install(kubeconfig, "mariadb", namespace, openstack_helm.MARIADB_BACKUP)
    cronjob = dyn.resources.get(api_version="batch/v1", kind="CronJob").get(
        name="mariadb-backup", namespace=namespace).to_dict()
    backup = backup_cronjob.inspect(cronjob)
    assert backup.archive_claim == "mariadb-backup-data" and not backup.node_local
    scripts = dyn.resources.get(api_version="v1", kind="ConfigMap").get(
        name=backup.scripts_configmap, namespace=namespace).to_dict()
    backup_cronjob.check_scripts(backup, scripts)
    source = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in source["volumes"]}

    pod = _run(dyn, namespace, db_backup.backup_job(cronjob, "keystone", REF, namespace))
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["spec"]["serviceAccountName"] == "mariadb-backup" and pod["spec"]["nodeName"]
    assert {v["name"]: v for v in pod["spec"]["volumes"] if v["name"] in volumes} == volumes
    # kubernetes-entrypoint held it until the mariadb Service had ready endpoints
    assert pod["metadata"]["annotations"]["bed.lcm.openstack.org/dependencies"] == "satisfied"
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["BACK_UP_MODE"], env["LCM_DATABASES"]) == (REF, "keystone")
    assert '/tmp/backup_mariadb.sh "${LCM_DATABASE}" || exit 1' in container["args"][-1]
    claim = dyn.resources.get(api_version="v1", kind="PersistentVolumeClaim").get(
        name="mariadb-backup-data", namespace=namespace).to_dict()
    assert claim["status"]["phase"] == "Bound"

    pod = _run(dyn, namespace, db_backup.restore_job(cronjob, "keystone", REF, namespace))
    assert pod["status"]["phase"] == "Succeeded"
    assert {v["name"]: v for v in pod["spec"]["volumes"] if v["name"] in volumes} == volumes
    (container,) = pod["spec"]["containers"]
    mounts = {m["mountPath"]: (m["name"], m.get("subPath")) for m in container["volumeMounts"]}
    assert mounts["/tmp/restore_mariadb.sh"] == ("mariadb-bin", "restore_mariadb.sh")
    assert mounts["/tmp/restore_main.sh"] == ("mariadb-bin", "restore_main.sh")
    assert mounts["/var/backup"] == ("mariadb-backup-dir", None)
    assert pod["metadata"]["labels"][db_backup.LABEL_DATABASE_STEP] == "restore"


def _phase(kubeconfig: str, namespace: str, phase_type: str, block: Dict[str, Any]) -> Dict[str, Any]:
    """The stock nova chart's phase, run by the module: only the database step
    (no template of the chart is chosen; nova's db-sync waits for what its
    install runs, which needs neutron and libvirt)."""
    args = {"type": phase_type, "service": "nova", "namespace": namespace, "target_version": "2025.2",
            "source": {"chart": str(openstack_helm.chart("nova")), "templates": []}, phase_type: block,
            "binary_path": openstack_helm.helm_bin()}
    result = run_module("phase", args, kubeconfig)
    assert result.get("failed") is None, result.get("msg")
    assert result["phase"]["state"] == "Succeeded"
    return result


def _job_databases(dyn: dynamic.DynamicClient, namespace: str, name: str) -> str:
    job = kube.wait_for(dyn, "batch/v1", "Job", name, namespace, kube.has_condition("Complete"), timeout=120)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container["env"]}["LCM_DATABASES"]


def test_nova_s_three_databases_are_backed_up_by_an_upgrade_and_restored_by_a_rollback(
        dyn, kubeconfig, crds, namespace) -> None:
    openstack_helm.install(kubeconfig, "mariadb", namespace, openstack_helm.MARIADB_BACKUP)
    upgrade = _phase(kubeconfig, namespace, "upgrade",
                     {"backup_database": True, "backup": {"cronjob": "mariadb-backup"}})["phase"]
    ref, source = upgrade["backup_ref"], upgrade["backup_source"]
    assert source == {"cronjob": "mariadb-backup", "namespace": namespace, "databases": NOVA}
    # as the apiserver keeps it: the CRD's schema would prune a field it does not know
    phases = dyn.resources.get(api_version=GROUP, kind="Phase")
    status = phases.get(name=upgrade["name"], namespace=namespace).to_dict()["status"]
    assert status["backupRef"] == ref and status["backupSource"]["databases"] == NOVA
    assert _job_databases(dyn, namespace, f"{ref}-db-backup") == "nova nova_cell0 nova_cell1"

    # the rollback role passes what the upgrade Phase recorded
    rollback = _phase(kubeconfig, namespace, "rollback",
                      {"restore_database": True, "backup_ref": ref, "backup": source})["phase"]
    assert _job_databases(dyn, namespace, f"{ref}-db-restore") == "nova nova_cell0 nova_cell1"
    spec = phases.get(name=rollback["name"], namespace=namespace).to_dict()["spec"]
    assert spec["rollback"]["backup"]["databases"] == NOVA

    # a backupSource an upgrade wrote before there were several: its one database
    older = "nova-2025-1-0a1b2c3d"
    _phase(kubeconfig, namespace, "rollback", {"restore_database": True, "backup_ref": older, "backup": {
        "cronjob": "mariadb-backup", "namespace": namespace, "database": "nova"}})
    assert _job_databases(dyn, namespace, f"{older}-db-restore") == "nova"
