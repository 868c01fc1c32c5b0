"""plugins/module_utils/phase/backup_cronjob.py: the mariadb chart's backup
CronJob read by what it mounts, and refused, naming what is wrong, when it has
another shape."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.phase import backup_cronjob
from ansible_collections.lcm.openstack.plugins.module_utils.phase.backup_cronjob import BackupShapeError
from support.db_backup import load


def test_the_chart_cronjob_is_read_by_what_it_mounts(cronjob, hostpath_cronjob) -> None:
    backup = backup_cronjob.inspect(cronjob)
    assert (backup.cronjob, backup.container, backup.script_path) == (
        "mariadb-backup", "mariadb-backup", "/tmp/backup_mariadb.sh")
    assert (backup.scripts_volume, backup.scripts_configmap) == ("mariadb-bin", "mariadb-bin")
    assert (backup.base_dir, backup.archive_volume, backup.archive_claim) == (
        "/var/backup", "mariadb-backup-dir", "mariadb-backup-data")
    assert not backup.node_local
    local = backup_cronjob.inspect(hostpath_cronjob)
    assert local.node_local and local.archive_host_path == "/var/backup" and local.archive_claim is None


def test_the_scripts_configmap_must_hold_the_restore_scripts() -> None:
    configmap = load("mariadb-bin-keys.yaml", "ConfigMap")
    backup = backup_cronjob.inspect(load("mariadb-backup.out", "CronJob"))
    backup_cronjob.check_scripts(backup, configmap)
    for key in ("restore_mariadb.sh", "restore_main.sh"):
        del configmap["data"][key]
    with pytest.raises(BackupShapeError) as err:
        backup_cronjob.check_scripts(backup, configmap)
    assert str(err.value) == ("ConfigMap mariadb-bin (the scripts of CronJob mariadb-backup) has no "
                              "restore_mariadb.sh, restore_main.sh: turn on conf.backup.enabled in the "
                              "mariadb release")


def _break(cronjob: Dict[str, Any], how: str) -> None:
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    if how == "kind":
        cronjob["kind"] = "Job"
    elif how == "no-script":
        container["volumeMounts"] = [m for m in container["volumeMounts"] if m.get("subPath") != "backup_mariadb.sh"]
    elif how == "script-from-emptydir":
        next(v for v in pod["volumes"] if v["name"] == "mariadb-bin").pop("configMap")
    elif how == "no-base-dir":
        container["env"] = [e for e in container["env"] if e["name"] != "MARIADB_BACKUP_BASE_DIR"]
    elif how == "no-namespace":
        container["env"] = [e for e in container["env"] if e["name"] != "MARIADB_POD_NAMESPACE"]
    elif how == "archive-unmounted":
        container["volumeMounts"] = [m for m in container["volumeMounts"] if m["mountPath"] != "/var/backup"]
    elif how == "archive-emptydir":
        volume = next(v for v in pod["volumes"] if v["name"] == "mariadb-backup-dir")
        volume.pop("persistentVolumeClaim")
        volume["emptyDir"] = {}
    elif how == "no-containers":
        pod["containers"] = []


@pytest.mark.parametrize("how, message", [
    ("kind", "CronJob mariadb-backup is a Job, not a CronJob"),
    ("no-script", "CronJob mariadb-backup has no container mount(s) of backup_mariadb.sh"),
    ("script-from-emptydir", "backup_mariadb.sh is not mounted from a ConfigMap volume (volume 'mariadb-bin')"),
    ("no-base-dir", "container mariadb-backup sets no MARIADB_BACKUP_BASE_DIR value"),
    ("no-namespace", "container mariadb-backup sets no MARIADB_POD_NAMESPACE"),
    ("archive-unmounted", "container mariadb-backup mounts no volume at MARIADB_BACKUP_BASE_DIR /var/backup"),
    ("archive-emptydir", "the archive directory /var/backup is an emptyDir"),
    ("no-containers", "CronJob mariadb-backup has no spec.jobTemplate.spec.template.spec.containers"),
])
def test_a_cronjob_of_another_shape_is_refused_naming_what_is_wrong(cronjob, how: str, message: str) -> None:
    _break(cronjob, how)
    with pytest.raises(BackupShapeError) as err:
        backup_cronjob.inspect(cronjob)
    assert message in str(err.value)
