# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Database backups the openstack-helm way: one-off Jobs made from the mariadb
chart's backup CronJob.

The mariadb chart renders CronJob ``mariadb-backup`` when
``manifests.cron_job_mariadb_backup`` and ``conf.backup.enabled`` are on. Its
container runs ``backup_mariadb.sh [SCOPE]`` (helm-toolkit's backup framework):
SCOPE is one database or ``all``, and the archive lands in
``$MARIADB_BACKUP_BASE_DIR/db/<namespace>/mariadb/archive`` as
``mariadb.<namespace>.<scope>.<BACK_UP_MODE>.<date>.tar.gz``. The restore side
of the same framework, ``restore_mariadb.sh restore <archive> <database>``, is
in the same scripts ConfigMap but mounted by nothing.

So an upgrade's backup is a Job made from the CronJob's jobTemplate that backs
up the service's database with BACK_UP_MODE set to the phase's backup ref, and
a rollback's restore is a Job from the same jobTemplate (same account, volumes,
secrets and configuration) that mounts the restore scripts, finds the newest
archive carrying that ref and restores that one database.

Everything here is pure: it reads the CronJob (live or rendered) and returns
Job bodies. What owns the Jobs is for the phase to decide (``ownership``):
no ownerReferences are set, and none is copied from the CronJob.
"""

from __future__ import annotations

import copy
import hashlib
import posixpath
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.backup_cronjob import (
    BASE_DIR_ENV, DATABASE_ENV, MODE_ENV, NAMESPACE_ENV, RESTORE_MAIN, RESTORE_SCRIPT, SYSTEM, BackupShapeError,
    CronJobBackup, inspect,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP

LABEL_BACKUP_REF = f"{GROUP}/backup-ref"
LABEL_DATABASE_STEP = f"{GROUP}/database-step"
ANNOTATION_FROM_CRONJOB = f"{GROUP}/from-cronjob"
# What `kubectl create job --from=cronjob/...` marks its Jobs with.
ANNOTATION_INSTANTIATE = "cronjob.kubernetes.io/instantiate"

# A finished Job keeps its pods' logs this long; the archive outlives it.
DEFAULT_TTL_SECONDS = 86400
# Fresh pods (restartPolicy Never): each try starts from a clean /tmp and its
# own verification server, and a failed try's log stays readable.
DEFAULT_BACKOFF_LIMIT = 2
_NAME_MAX = 63  # a Job's name is also its pods' job-name label value

# The archive name is split on '.', so neither a ref nor a database may hold one.
_REF = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_DATABASE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
# "all" is backup_mariadb.sh's scope for every database; the others it refuses.
_NOT_ONE_DATABASE = ("all", "information_schema", "performance_schema", "mysql", "sys")

# Run by the restore Job's container (POSIX sh). The glob sorts by the
# archive's ISO date, so the last match is the newest try of this backup.
_RESTORE = f"""\
dir="${{{BASE_DIR_ENV}}}/db/${{{NAMESPACE_ENV}}}/{SYSTEM}/archive"
prefix="{SYSTEM}.${{{NAMESPACE_ENV}}}.${{{DATABASE_ENV}}}.${{{MODE_ENV}}}."
archive=""
for path in "$dir/$prefix"*.tar.gz; do
  if [ -f "$path" ]; then archive="${{path##*/}}"; fi
done
if [ -z "$archive" ]; then
  echo "no backup archive $prefix*.tar.gz in $dir: backup ${{{MODE_ENV}}} is not on this volume" \\
    "(removed by the chart's retention, conf.backup.days_to_keep, or taken on another volume or node)" >&2
  exit 1
fi
echo "restoring database ${{{DATABASE_ENV}}} from $archive"
exec {RESTORE_SCRIPT} restore "$archive" "${{{DATABASE_ENV}}}"
"""


def archive_dir(backup: CronJobBackup, namespace: str) -> str:
    """Where backup_mariadb.sh writes its archives, run in `namespace`."""
    return posixpath.join(backup.base_dir, "db", namespace, SYSTEM, "archive")


def archive_prefix(namespace: str, database: str, ref: str) -> str:
    """The archive of backup `ref` is `<prefix><date>.tar.gz`."""
    return f"{SYSTEM}.{namespace}.{database}.{ref}."


def job_names(ref: str) -> Tuple[str, str]:
    """The backup and restore Jobs' names: `<ref>-db-backup`, `<ref>-db-restore`
    (the ref starts with the release, as openstack-helm's `keystone-db-sync`)."""
    return _name(ref, "db-backup"), _name(ref, "db-restore")


def backup_job(cronjob: Mapping[str, Any], database: str, ref: str, namespace: str, *,
               ttl_seconds: Optional[int] = DEFAULT_TTL_SECONDS, backoff_limit: int = DEFAULT_BACKOFF_LIMIT,
               active_deadline_seconds: Optional[int] = None) -> Dict[str, Any]:
    """A one-off Job from the CronJob that backs up `database` as backup `ref`."""
    backup = _checked(cronjob, database, ref, namespace)
    job = _job(cronjob, backup, "backup", job_names(ref)[0], ref, namespace,
               ttl_seconds, backoff_limit, active_deadline_seconds)
    container = _container(job, backup.container)
    container["command"], container["args"] = _with_scope(container, backup, str(cronjob["metadata"]["name"]))
    _set_env(container, {MODE_ENV: ref, DATABASE_ENV: database})
    return job


def restore_job(cronjob: Mapping[str, Any], database: str, ref: str, namespace: str, *,
                node: Optional[str] = None, ttl_seconds: Optional[int] = DEFAULT_TTL_SECONDS,
                backoff_limit: int = DEFAULT_BACKOFF_LIMIT,
                active_deadline_seconds: Optional[int] = None) -> Dict[str, Any]:
    """A one-off Job from the CronJob that restores `database` from the newest
    archive of backup `ref`. Archives on a hostPath are on the node that took
    the backup: `node` (the backup pod's spec.nodeName) is then required."""
    backup = _checked(cronjob, database, ref, namespace)
    if backup.node_local and not node:
        raise BackupShapeError(
            f"CronJob {backup.cronjob} keeps its archives on the hostPath {backup.archive_host_path} of the node "
            "that ran the backup: the restore needs that node's name (the backup pod's spec.nodeName), or "
            "the archives on a PersistentVolumeClaim (manifests.pvc_backup)")
    job = _job(cronjob, backup, "restore", job_names(ref)[1], ref, namespace,
               ttl_seconds, backoff_limit, active_deadline_seconds)
    container = _container(job, backup.container)
    container["command"], container["args"] = ["/bin/sh"], ["-c", _RESTORE]
    _set_env(container, {MODE_ENV: ref, DATABASE_ENV: database})
    mounts = [m for m in container.get("volumeMounts") or []
              if m.get("mountPath") not in (RESTORE_SCRIPT, RESTORE_MAIN)]
    for path in (RESTORE_SCRIPT, RESTORE_MAIN):
        mounts.append({"name": backup.scripts_volume, "mountPath": path,
                       "subPath": posixpath.basename(path), "readOnly": True})
    container["volumeMounts"] = mounts
    if backup.node_local and node:
        _pin_to_node(job["spec"]["template"]["spec"], node)
    return job


# -- helpers -----------------------------------------------------------------
def _checked(cronjob: Mapping[str, Any], database: str, ref: str, namespace: str) -> CronJobBackup:
    if not _REF.match(ref or ""):
        raise PhaseError(f"backup ref {ref!r} must be lower-case letters, digits and '-' (no '.': the "
                         "archive's name is split on dots)")
    if not _DATABASE.match(database or "") or database.lower() in _NOT_ONE_DATABASE:
        raise PhaseError(f"database {database!r} cannot be backed up one by one: give the service's own "
                         "database name (letters, digits, '_' or '-'; not a system database)")
    if not namespace:
        raise PhaseError("the backup Job needs the namespace it runs in")
    backup = inspect(cronjob)
    if backup.namespace and backup.namespace != namespace:
        raise BackupShapeError(
            f"CronJob {backup.cronjob} is in namespace {backup.namespace}: its Jobs must run there, where its "
            f"account, secrets, scripts and archive volume are, not in {namespace}")
    return backup


def _job(cronjob: Mapping[str, Any], backup: CronJobBackup, step: str, name: str, ref: str,
         namespace: str, ttl_seconds: Optional[int], backoff_limit: int,
         active_deadline_seconds: Optional[int]) -> Dict[str, Any]:
    template = copy.deepcopy(cronjob["spec"]["jobTemplate"])
    meta = template.get("metadata") or {}
    ours = {LABEL_BACKUP_REF: ref, LABEL_DATABASE_STEP: step}
    spec = {k: v for k, v in (template.get("spec") or {}).items()
            if k not in ("selector", "manualSelector", "suspend", "ttlSecondsAfterFinished")}
    spec["backoffLimit"] = backoff_limit
    if ttl_seconds is not None:
        spec["ttlSecondsAfterFinished"] = ttl_seconds
    if active_deadline_seconds:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    pod_meta = spec["template"].setdefault("metadata", {}) or {}
    spec["template"]["metadata"] = pod_meta
    pod_meta["labels"] = {**(pod_meta.get("labels") or {}), **ours}
    spec["template"]["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**(meta.get("labels") or {}), **ours},
            "annotations": {**(meta.get("annotations") or {}), ANNOTATION_INSTANTIATE: "manual",
                            ANNOTATION_FROM_CRONJOB: backup.cronjob},
        },
        "spec": spec,
    }


def _container(job: Dict[str, Any], name: str) -> Dict[str, Any]:
    return next(c for c in job["spec"]["template"]["spec"]["containers"] if c.get("name") == name)


def _with_scope(container: Mapping[str, Any], backup: CronJobBackup, cronjob: str) -> Tuple[List[str], List[str]]:
    """The container's command and args, the backup script called with the
    database as its SCOPE. The chart's shell line ends with the script (it
    starts the verification server first): the scope is appended there."""
    command = [str(a) for a in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    words = command + args
    last = words[-1].rstrip() if words else ""
    shell = len(words) >= 2 and words[-2] == "-c"
    ends = (" " + backup.script_path, "&" + backup.script_path)
    if not (last == backup.script_path or (shell and last.endswith(ends))):
        raise BackupShapeError(
            f"CronJob {cronjob}: container {backup.container} does not end its command with "
            f"{backup.script_path}, so the database to back up cannot be passed to it")
    scoped = f'{last} "${{{DATABASE_ENV}}}"' if shell else last
    if not shell:  # exec form: the scope is one more argument, expanded by the kubelet
        return command, args + [f"$({DATABASE_ENV})"]
    if args:
        return command, args[:-1] + [scoped]
    return command[:-1] + [scoped], args


def _set_env(container: Dict[str, Any], values: Mapping[str, str]) -> None:
    env = [e for e in container.get("env") or [] if e.get("name") not in values]
    container["env"] = env + [{"name": k, "value": v} for k, v in values.items()]


def _pin_to_node(pod: Dict[str, Any], node: str) -> None:
    """Schedule only on `node` (by the Node's name, not a label), keeping the
    CronJob's own node affinity: each of its terms gets the node added."""
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    required = (pod.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}))
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        term["matchFields"] = [f for f in term.get("matchFields") or [] if f.get("key") != "metadata.name"] + [field]
    required["nodeSelectorTerms"] = terms


def _name(ref: str, suffix: str) -> str:
    name = f"{ref}-{suffix}"
    if len(name) <= _NAME_MAX:
        return name
    seed = hashlib.sha256(ref.encode()).hexdigest()[:8]
    head = ref[: _NAME_MAX - len(suffix) - len(seed) - 2].rstrip("-")
    return f"{head}-{seed}-{suffix}"
