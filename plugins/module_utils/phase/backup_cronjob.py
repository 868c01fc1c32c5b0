# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mariadb chart's backup CronJob, read: which container runs
``backup_mariadb.sh``, where the scripts and the archives are mounted from,
and whether the scripts ConfigMap holds the restore side too.

Found by what the CronJob mounts, not by names, so a renamed release or
CronJob works; what is missing is said with the chart option that renders
it. The Jobs made from it are phase/db_backup.py's.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

# backup_mariadb.sh sets DB_NAME to this: the archive's first name part and directory.
SYSTEM = "mariadb"
BACKUP_SCRIPT = "backup_mariadb.sh"
BACKUP_MAIN = "backup_main.sh"
# restore_mariadb.sh sources /tmp/restore_main.sh by that fixed path.
RESTORE_SCRIPT = "/tmp/restore_mariadb.sh"
RESTORE_MAIN = "/tmp/restore_main.sh"
SCRIPT_KEYS = (BACKUP_SCRIPT, BACKUP_MAIN, posixpath.basename(RESTORE_SCRIPT), posixpath.basename(RESTORE_MAIN))

BASE_DIR_ENV = "MARIADB_BACKUP_BASE_DIR"
NAMESPACE_ENV = "MARIADB_POD_NAMESPACE"
MODE_ENV = "BACK_UP_MODE"            # read by helm-toolkit's backup_main.sh
DATABASES_ENV = "LCM_DATABASES"      # the databases the Job backs up or restores, space-separated
DATABASE_ENV = "LCM_DATABASE"        # the one its loop is at


class BackupShapeError(PhaseError):
    """The CronJob is not shaped like the mariadb chart's backup CronJob."""


@dataclass(frozen=True)
class CronJobBackup:
    """What a backup CronJob provides, found by what it mounts, not by names."""

    cronjob: str
    namespace: Optional[str]   # the CronJob's own, when it has one
    container: str             # the container that runs backup_mariadb.sh
    script_path: str           # where that script is mounted
    scripts_volume: str
    scripts_configmap: str
    base_dir: str              # MARIADB_BACKUP_BASE_DIR
    archive_volume: str        # the volume mounted at base_dir
    archive_claim: Optional[str] = None       # a PersistentVolumeClaim's name
    archive_host_path: Optional[str] = None   # a node's directory

    @property
    def node_local(self) -> bool:
        """Archives on a node's hostPath: a restore must run on the node of the backup."""
        return self.archive_host_path is not None


def inspect(cronjob: Mapping[str, Any]) -> CronJobBackup:
    """Read the backup CronJob's shape; a BackupShapeError names what is missing."""
    name = str((cronjob.get("metadata") or {}).get("name") or "")
    what = f"CronJob {name or '(no name)'}"
    if cronjob.get("kind") != "CronJob":
        raise BackupShapeError(f"{what} is a {cronjob.get('kind') or 'object without a kind'}, not a CronJob")
    pod = pod_spec(cronjob, what)
    found = [(c, m) for c in pod.get("containers") or [] for m in c.get("volumeMounts") or []
             if m.get("subPath") == BACKUP_SCRIPT]
    if len(found) != 1:
        raise BackupShapeError(
            f"{what} has {'no' if not found else len(found)} container mount(s) of {BACKUP_SCRIPT}; the mariadb "
            "chart's backup CronJob (manifests.cron_job_mariadb_backup with conf.backup.enabled) has one")
    container, script = found[0]
    cname = str(container.get("name") or "")
    volumes = {str(v.get("name")): v for v in pod.get("volumes") or []}
    scripts = volumes.get(str(script.get("name")))
    if not scripts or not (scripts.get("configMap") or {}).get("name"):
        raise BackupShapeError(f"{what}: {BACKUP_SCRIPT} is not mounted from a ConfigMap volume "
                               f"(volume {script.get('name')!r}); the restore scripts are taken from the same one")
    base_dir = literal_env(container, BASE_DIR_ENV)
    if not base_dir:
        raise BackupShapeError(f"{what}: container {cname} sets no {BASE_DIR_ENV} value; the archive "
                               "directory is read from it")
    if not any(e.get("name") == NAMESPACE_ENV for e in container.get("env") or []):
        raise BackupShapeError(f"{what}: container {cname} sets no {NAMESPACE_ENV}; the scripts name "
                               "the archive after it")
    mount = next((m for m in container.get("volumeMounts") or []
                  if posixpath.normpath(str(m.get("mountPath") or "")) == posixpath.normpath(base_dir)), None)
    if mount is None or str(mount.get("name")) not in volumes:
        raise BackupShapeError(f"{what}: container {cname} mounts no volume at {BASE_DIR_ENV} {base_dir}")
    archive = volumes[str(mount["name"])]
    if "emptyDir" in archive:
        raise BackupShapeError(f"{what}: the archive directory {base_dir} is an emptyDir; an archive would go "
                               "with the backup's pod and no restore could find it. Turn on manifests.pvc_backup")
    return CronJobBackup(
        cronjob=name, namespace=(cronjob.get("metadata") or {}).get("namespace"), container=cname,
        script_path=str(script.get("mountPath") or ""), scripts_volume=str(script["name"]),
        scripts_configmap=str(scripts["configMap"]["name"]), base_dir=base_dir,
        archive_volume=str(mount["name"]),
        archive_claim=(archive.get("persistentVolumeClaim") or {}).get("claimName"),
        archive_host_path=(archive.get("hostPath") or {}).get("path"))


def check_scripts(backup: CronJobBackup, configmap: Mapping[str, Any]) -> None:
    """The scripts ConfigMap holds the backup and the restore scripts (the chart
    renders them only with conf.backup.enabled)."""
    keys = set((configmap.get("data") or {})) | set((configmap.get("binaryData") or {}))
    missing = [k for k in SCRIPT_KEYS if k not in keys]
    if missing:
        raise BackupShapeError(
            f"ConfigMap {backup.scripts_configmap} (the scripts of CronJob {backup.cronjob}) has no "
            f"{', '.join(missing)}: turn on conf.backup.enabled in the mariadb release")


def pod_spec(cronjob: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    pod = ((((cronjob.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {})
           .get("template") or {}).get("spec")
    if not isinstance(pod, Mapping) or not pod.get("containers"):
        raise BackupShapeError(f"{what} has no spec.jobTemplate.spec.template.spec.containers")
    return pod


def literal_env(container: Mapping[str, Any], name: str) -> str:
    return next((str(e.get("value") or "") for e in container.get("env") or [] if e.get("name") == name), "")
