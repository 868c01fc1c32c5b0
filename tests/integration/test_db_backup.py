"""The backup and restore Jobs made from the stock mariadb chart's backup
CronJob (plugins/module_utils/phase/db_backup.py), on the bed: the apiserver takes
them, and their pods start with the CronJob's account, volumes and claim,
after the entrypoint gate let them through."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from kubernetes import dynamic

from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_cronjob, db_backup
from support import kube, openstack_helm

pytestmark = pytest.mark.bed

REF = "keystone-2025-2-0a1b2c3d"


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
    assert (env["BACK_UP_MODE"], env["LCM_DATABASE"]) == (REF, "keystone")
    assert container["args"][-1].endswith('/tmp/backup_mariadb.sh "${LCM_DATABASE}"')
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
