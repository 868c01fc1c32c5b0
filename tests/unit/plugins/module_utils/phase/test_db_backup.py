"""plugins/module_utils/phase/db_backup.py: backup and restore Jobs made from the
mariadb chart's backup CronJob, on the real chart's render (fixtures/db_backup/)."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_cronjob, db_backup
from ansible_collections.lcm.openstack.plugins.module_utils.phase.backup_cronjob import BackupShapeError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

REF = "keystone-2025-2-0a1b2c3d"
NOVA = ["nova", "nova_cell0", "nova_cell1"]
SHELL = shutil.which("sh") or "/bin/sh"


def _pod(job: Dict[str, Any]) -> Dict[str, Any]:
    return job["spec"]["template"]["spec"]


def _container(job: Dict[str, Any], name: str = "mariadb-backup") -> Dict[str, Any]:
    return next(c for c in _pod(job)["containers"] if c["name"] == name)


def _env(container: Dict[str, Any]) -> Dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


def test_archives_live_under_the_namespace_and_are_named_by_database_and_ref(cronjob) -> None:
    backup = backup_cronjob.inspect(cronjob)
    assert db_backup.archive_dir(backup, "openstack") == "/var/backup/db/openstack/mariadb/archive"
    assert db_backup.archive_prefix("openstack", "keystone", REF) == f"mariadb.openstack.keystone.{REF}."


def test_the_backup_job_backs_up_every_database_under_the_ref(cronjob) -> None:
    original = copy.deepcopy(cronjob)
    job = db_backup.backup_job(cronjob, NOVA + ["nova"], REF, "openstack")
    assert cronjob == original  # the CronJob is only read
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["metadata"]["name"] == f"{REF}-db-backup" and job["metadata"]["namespace"] == "openstack"
    assert "ownerReferences" not in job["metadata"]
    labels = job["metadata"]["labels"]
    assert labels["application"] == "mariadb-backup" and labels["release_group"] == "mariadb"
    assert labels[db_backup.LABEL_BACKUP_REF] == REF and labels[db_backup.LABEL_DATABASE_STEP] == "backup"
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual",
                                              db_backup.ANNOTATION_FROM_CRONJOB: "mariadb-backup"}
    assert _pod(job)["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] == db_backup.DEFAULT_BACKOFF_LIMIT
    assert job["spec"]["ttlSecondsAfterFinished"] == db_backup.DEFAULT_TTL_SECONDS
    assert job["spec"]["template"]["metadata"]["labels"][db_backup.LABEL_BACKUP_REF] == REF
    container = _container(job)
    assert container["command"] == ["/bin/sh"] and container["args"][0] == "-c"
    # the chart's line, its script's call made a loop over the databases
    line = container["args"][1]
    assert line.startswith("( /tmp/start_verification_server.sh ) & {\n") and line.endswith("done\n}")
    assert len(container["args"]) == 2
    assert 'for LCM_DATABASE in ${LCM_DATABASES}; do' in line
    assert '  /tmp/backup_mariadb.sh "${LCM_DATABASE}" || exit 1' in line
    env = _env(container)
    assert env["BACK_UP_MODE"] == REF and env["LCM_DATABASES"] == "nova nova_cell0 nova_cell1"
    assert "LCM_DATABASE" not in env
    assert env["MARIADB_BACKUP_BASE_DIR"] == "/var/backup" and "MARIADB_POD_NAMESPACE" in env
    # the pod is the CronJob's: same account, init containers, volumes and mounts
    source = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert _pod(job)["serviceAccountName"] == "mariadb-backup"
    assert _pod(job)["volumes"] == source["volumes"]
    assert _pod(job)["initContainers"] == source["initContainers"]
    assert container["volumeMounts"] == source["containers"][0]["volumeMounts"]


def test_the_restore_job_restores_the_newest_archive_of_the_ref(cronjob) -> None:
    job = db_backup.restore_job(cronjob, NOVA, REF, "openstack", ttl_seconds=None, backoff_limit=0,
                                active_deadline_seconds=900)
    assert job["metadata"]["name"] == f"{REF}-db-restore"
    assert job["metadata"]["labels"][db_backup.LABEL_DATABASE_STEP] == "restore"
    assert "ttlSecondsAfterFinished" not in job["spec"]
    assert (job["spec"]["backoffLimit"], job["spec"]["activeDeadlineSeconds"]) == (0, 900)
    container = _container(job)
    assert container["command"] == ["/bin/sh"] and container["args"][0] == "-c"
    script = container["args"][1]
    assert '/tmp/restore_mariadb.sh restore "$archive" "${LCM_DATABASE}" || exit 1' in script
    assert "start_verification_server" not in script
    assert _env(container)["BACK_UP_MODE"] == REF and _env(container)["LCM_DATABASES"] == " ".join(NOVA)
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    for path in ("/tmp/restore_mariadb.sh", "/tmp/restore_main.sh"):
        assert mounts[path] == {"name": "mariadb-bin", "mountPath": path,
                                "subPath": path.rsplit("/", 1)[1], "readOnly": True}
    assert mounts["/var/backup"]["name"] == "mariadb-backup-dir"
    assert "affinity" not in _pod(job)  # archives on a claim: the volume brings the pod to them


def _archives(base: Path) -> Path:
    archive = base / "db" / "openstack" / "mariadb" / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    return archive


def _sh(script: str, base: Path, **env: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "MARIADB_BACKUP_BASE_DIR": str(base), "MARIADB_POD_NAMESPACE": "openstack",
           "BACK_UP_MODE": REF, "LCM_DATABASES": " ".join(NOVA), **env}
    return subprocess.run([SHELL, "-c", script], env=env, capture_output=True, text=True, check=False)


def test_the_restore_script_finds_every_database_s_own_newest_archive(cronjob, tmp_path: Path) -> None:
    """The restore container's script, run by sh against a directory of archives."""
    job = db_backup.restore_job(cronjob, NOVA, REF, "openstack")
    script = _container(job)["args"][1].replace("/tmp/restore_mariadb.sh", "echo RUN")
    archive = _archives(tmp_path)
    for name in (f"mariadb.openstack.nova.{REF}.2026-01-01T00:00:00Z.tar.gz",
                 f"mariadb.openstack.nova.{REF}.2026-01-02T00:00:00Z.tar.gz",
                 "mariadb.openstack.nova.2026-01-03T00:00:00Z.tar.gz",
                 f"mariadb.openstack.nova_cell0.{REF}.2026-01-01T00:00:01Z.tar.gz",
                 f"mariadb.openstack.nova_cell1.{REF}.2026-01-01T00:00:02Z.tar.gz",
                 f"mariadb.openstack.placement.{REF}.2026-01-04T00:00:00Z.tar.gz",
                 f"mariadb.openstack.nova.{REF}-other.2026-01-05T00:00:00Z.tar.gz"):
        (archive / name).write_bytes(b"")
    out = _sh(script, tmp_path)
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stdout.splitlines() if line.startswith("RUN")] == [
        f"RUN restore mariadb.openstack.nova.{REF}.2026-01-02T00:00:00Z.tar.gz nova",
        f"RUN restore mariadb.openstack.nova_cell0.{REF}.2026-01-01T00:00:01Z.tar.gz nova_cell0",
        f"RUN restore mariadb.openstack.nova_cell1.{REF}.2026-01-01T00:00:02Z.tar.gz nova_cell1"]
    # one database's archive gone: nothing is restored, not even the others
    (archive / f"mariadb.openstack.nova_cell1.{REF}.2026-01-01T00:00:02Z.tar.gz").unlink()
    missing = _sh(script, tmp_path)
    assert missing.returncode == 1 and "RUN" not in missing.stdout
    assert f"no backup archive of database nova_cell1 for backup {REF}" in missing.stderr


def _fake_backup(cronjob: Dict[str, Any], tmp_path: Path) -> None:
    """The CronJob's backup script, mounted in tmp_path: like backup_mariadb.sh,
    it writes mariadb.<namespace>.<SCOPE>.<BACK_UP_MODE>.<date>.tar.gz and exits 0
    even when it wrote nothing (here, for the database named in $FAIL)."""
    script = tmp_path / "backup_mariadb.sh"
    script.write_text('#!/bin/sh\necho "BACKUP $1"\n[ "$1" = "$FAIL" ] && exit 0\n'
                      'touch "$MARIADB_BACKUP_BASE_DIR/db/$MARIADB_POD_NAMESPACE/mariadb/archive/'
                      'mariadb.$MARIADB_POD_NAMESPACE.$1.$BACK_UP_MODE.$(date -u +%Y-%m-%dT%H:%M:%S.%NZ).tar.gz"\n')
    script.chmod(0o755)
    container = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["-c", f"( true ) &\n{script}"]
    for mount in container["volumeMounts"]:
        if mount.get("subPath") == "backup_mariadb.sh":
            mount["mountPath"] = str(script)


def test_the_backup_script_backs_up_each_database_and_fails_on_one_without_an_archive(
        cronjob, tmp_path: Path) -> None:
    _fake_backup(cronjob, tmp_path)
    script = _container(db_backup.backup_job(cronjob, NOVA, REF, "openstack"))["args"][1]
    archive = _archives(tmp_path)
    out = _sh(script, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["BACKUP nova", "BACKUP nova_cell0", "BACKUP nova_cell1"]
    assert sorted(p.name.split(".")[2] for p in archive.iterdir()) == NOVA
    # an older archive of the same backup is not this run's
    (archive / f"mariadb.openstack.nova_cell0.{REF}.2000-01-01T00:00:00Z.tar.gz").write_bytes(b"")
    failed = _sh(script, tmp_path, FAIL="nova_cell0")
    assert failed.returncode == 1
    assert failed.stdout.split() == ["BACKUP", "nova", "BACKUP", "nova_cell0"]  # cell1 not tried
    assert f"the backup of database nova_cell0 wrote no archive of backup {REF}" in failed.stderr


def test_archives_on_a_hostpath_restore_on_the_backup_node(hostpath_cronjob) -> None:
    with pytest.raises(BackupShapeError) as err:
        db_backup.restore_job(hostpath_cronjob, "keystone", REF, "openstack")
    assert "hostPath /var/backup" in str(err.value) and "spec.nodeName" in str(err.value)
    assert "manifests.pvc_backup" in str(err.value)
    job = db_backup.restore_job(hostpath_cronjob, "keystone", REF, "openstack", node="node-2")
    terms = _pod(job)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]
    assert _pod(job)["nodeSelector"] == {"openstack-control-plane": "enabled"}
    # the backup itself may run anywhere
    assert "affinity" not in _pod(db_backup.backup_job(hostpath_cronjob, "keystone", REF, "openstack"))


def test_a_node_pin_keeps_the_cronjobs_own_affinity(hostpath_cronjob) -> None:
    pod = hostpath_cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    zone = {"key": "zone", "operator": "In", "values": ["a"]}
    pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [zone]}]}}}
    job = db_backup.restore_job(hostpath_cronjob, "keystone", REF, "openstack", node="node-2")
    (term,) = _pod(job)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert term["matchExpressions"] == [zone]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]


@pytest.mark.parametrize("database, ref, namespace, message", [
    ("keystone", "Keystone.2025", "openstack", "backup ref 'Keystone.2025' must be lower-case"),
    ("keystone", "", "openstack", "backup ref '' must be"),
    ("key.stone", REF, "openstack", "database 'key.stone' cannot be backed up one by one"),
    (["nova", "mysql"], REF, "openstack", "database 'mysql' cannot be backed up one by one"),
    ("all", REF, "openstack", "database 'all' cannot be backed up one by one"),
    ([], REF, "openstack", "the backup Job needs the databases it backs up or restores"),
    ("keystone", REF, "", "the backup Job needs the namespace it runs in"),
])
def test_bad_inputs_are_refused(cronjob, database: Any, ref: str, namespace: str, message: str) -> None:
    with pytest.raises(PhaseError) as err:
        db_backup.backup_job(cronjob, database, ref, namespace)
    assert message in str(err.value)


def test_a_live_cronjob_runs_its_jobs_in_its_own_namespace(cronjob) -> None:
    live = copy.deepcopy(cronjob)
    live["metadata"].update(namespace="infra", uid="1234", resourceVersion="9",
                            ownerReferences=[{"kind": "Something", "name": "x"}],
                            annotations={"meta.helm.sh/release-name": "mariadb"})
    live["status"] = {"lastScheduleTime": "2026-01-01T00:00:00Z"}
    with pytest.raises(BackupShapeError, match="CronJob mariadb-backup is in namespace infra: its Jobs must run"):
        db_backup.backup_job(live, "keystone", REF, "openstack")
    job = db_backup.backup_job(live, "keystone", REF, "infra")
    assert set(job["metadata"]) == {"name", "namespace", "labels", "annotations"}
    assert "meta.helm.sh/release-name" not in job["metadata"]["annotations"]  # Helm's is the CronJob, not this Job
    assert "status" not in job


def test_job_names_stay_a_label_value() -> None:
    assert db_backup.job_names(REF) == (f"{REF}-db-backup", f"{REF}-db-restore")
    long_ref = "placement-" + "a" * 60
    names: List[str] = list(db_backup.job_names(long_ref))
    assert all(len(n) <= 63 for n in names)
    assert names[0].endswith("-db-backup") and names[1].endswith("-db-restore")
    assert db_backup.job_names(long_ref + "b") != db_backup.job_names(long_ref)


def test_the_exec_form_becomes_a_shell_that_calls_it_for_each_database(cronjob) -> None:
    container = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["command"], container["args"] = ["bash", "/tmp/backup_mariadb.sh"], []
    job = db_backup.backup_job(cronjob, "keystone", REF, "openstack")
    assert _container(job)["command"] == ["/bin/sh"] and _container(job)["args"][0] == "-c"
    assert '  bash /tmp/backup_mariadb.sh "${LCM_DATABASE}" || exit 1' in _container(job)["args"][1]
    assert _env(_container(job))["LCM_DATABASES"] == "keystone"


def test_the_jobtemplate_controller_fields_are_not_copied(cronjob) -> None:
    spec = cronjob["spec"]["jobTemplate"]["spec"]
    spec.update(suspend=True, manualSelector=True, selector={"matchLabels": {"a": "b"}}, backoffLimit=1000,
                ttlSecondsAfterFinished=5)
    job = db_backup.backup_job(cronjob, "keystone", REF, "openstack", ttl_seconds=60, backoff_limit=1)
    assert not {"suspend", "manualSelector", "selector"} & set(job["spec"])
    assert (job["spec"]["backoffLimit"], job["spec"]["ttlSecondsAfterFinished"]) == (1, 60)


def test_a_command_that_does_more_than_the_script_is_refused(cronjob) -> None:
    """The backup Job calls the script once per database where the chart's
    command calls it: a command that runs anything after the script has no
    such place."""
    cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"] = [
        "-c", "/tmp/backup_mariadb.sh all; echo done"]
    with pytest.raises(BackupShapeError) as err:
        db_backup.backup_job(cronjob, "keystone", REF, "openstack")
    assert "container mariadb-backup does not end its command with /tmp/backup_mariadb.sh" in str(err.value)
