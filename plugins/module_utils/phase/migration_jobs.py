# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jobs made from the chart's own db-sync Job, with the command replaced.

An upgrade check, an expand, an online data migration or a contract runs
what the chart's db-sync runs it with: the image at the new release, the
init containers that wait for the database, the config files, secrets and
mounts, the service account. Only the main container's command changes
(common/openstack_upgrade.py says which), and how the Job treats its exit:

- ``restartPolicy: Never`` and a pod failure policy, so the exit code of
  the run is the pod's, not a restart count: a code the step reads as
  a warning (a check's 1) or as "run again" (an online migration's 1) is
  told apart from a failure (kube/failures.py reads the annotation);
- ``backoffLimit`` is the step's attempts less one, so an online migration
  that keeps reporting more to do ends as a Failed Job, not a loop;
- ``terminationMessagePolicy: FallbackToLogsOnError``: a check that fails
  or warns leaves its output as the container's termination message, which
  the phase shows.

The Job runs with the config of the new release: every Secret and ConfigMap
the db-sync pod reads is copied under a name of its own (``<name>-<step>``)
for the phase, which owns the copy. The objects of the same name that the
running release uses are not touched, so a check that refuses the update has
changed nothing the service runs with.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import ANNOTATION_WAVE, pod_references

DB_SYNC_TEMPLATE = "templates/job-db-sync.yaml"
# How the Job's exit codes read (kube/failures.py): "warning=1", "repeat=1".
ANNOTATION_EXIT_CODES = f"{GROUP}/exit-codes"
ANNOTATION_STEP = f"{GROUP}/migration-step"
# The waves of the phase's steps: the chart's own jobs first (their waves are
# the template order), then online migrations, then contract.
STEP_WAVES = {"check": 100, "expand": 100, "online": 200, "contract": 300}
_HELM_KEYS = ("helm.sh/hook", "helm.sh/hook-weight", "helm.sh/hook-delete-policy", "helm.sh/resource-policy",
              "meta.helm.sh/release-name", "meta.helm.sh/release-namespace")
_COPIED = ("Secret", "ConfigMap")
# The phase types that run the chart's db-sync itself before their own Jobs.
KEEPS_DB_SYNC = ("contract",)


def db_sync_job(rendered: Sequence[Rendered]) -> Rendered:
    """The chart's db-sync Job, as rendered with its switch on."""
    found = [r for r in rendered if r.kind == "Job" and r.source == DB_SYNC_TEMPLATE]
    if len(found) != 1:
        raise PhaseError(
            f"the chart renders {len(found)} Job(s) from {DB_SYNC_TEMPLATE}; the upgrade's check, expand and "
            "contract Jobs are made from its one db-sync Job. Turn on manifests.job_db_sync, or update the "
            "service with update_strategy: drain and upgrade_commands without those steps")
    return found[0]


def derive(rendered: Sequence[Rendered], phase_type: str, jobs: Sequence[Mapping[str, Any]]) -> List[Rendered]:
    """The Jobs of the given steps (one a command, in order within a step)
    and the config copies they read, named for the phase type."""
    if not jobs:
        return []
    source = db_sync_job(rendered)
    copies = _config_copies(rendered, source, phase_type)
    renames = {(c.kind, _original(c)): c.name for c in copies}
    out: List[Rendered] = list(copies)
    within: Dict[str, int] = {}
    for job in jobs:
        step = str(job.get("step") or "")
        if step not in STEP_WAVES:
            raise PhaseError(f"{phase_type}.jobs: step {step!r} is not one of {', '.join(STEP_WAVES)}")
        index = within[step] = within.get(step, -1) + 1
        out.append(Rendered(_job(source.obj, step, job, renames), source.source, (STEP_WAVES[step] + index,)))
    return out


def chosen(selected: Sequence[Rendered], rendered: Sequence[Rendered], phase_type: str,
           jobs: Sequence[Mapping[str, Any]]) -> List[Rendered]:
    """A phase's objects once its migration Jobs are in: a check and an
    upgrade's expand run them instead of the chart's db-sync (which would
    sync the whole schema, contract included), a contract runs them after
    it (the chart's db-sync is a post-upgrade job, safe once the old
    release is gone). The config objects only the db-sync Job read go with it."""
    made = derive(rendered, phase_type, jobs)
    if phase_type in KEEPS_DB_SYNC:
        return list(selected) + made
    source = db_sync_job(rendered)
    still: Set[Tuple[str, str]] = set()  # what the phase's other pods read
    for r in selected:
        if r is not source and r.kind in ("Job", "Pod"):
            still |= pod_references(r.obj)
    return [r for r in selected
            if r is not source and (r.kind not in _COPIED or (r.kind, r.name) in still)] + made


def _original(copied: Rendered) -> str:
    return copied.obj["metadata"]["annotations"][f"{GROUP}/copy-of"]


def _config_copies(rendered: Sequence[Rendered], source: Rendered, step: str) -> List[Rendered]:
    wanted = {(k, n) for k, n in pod_references(source.obj) if k in _COPIED}
    out = []
    for r in rendered:
        if (r.kind, r.name) in wanted:
            obj = copy.deepcopy(r.obj)
            meta = obj.setdefault("metadata", {})
            meta["name"] = f"{r.name}-{step}"
            meta["annotations"] = dict(_without_helm(meta.get("annotations")), **{f"{GROUP}/copy-of": r.name})
            meta["labels"] = _without_helm(meta.get("labels"))
            out.append(Rendered(obj, r.source, r.wave))
    return out


def _without_helm(mapping: Optional[Mapping[str, str]]) -> Dict[str, str]:
    return {k: v for k, v in (mapping or {}).items() if k not in _HELM_KEYS and k != "app.kubernetes.io/managed-by"}


def _job(base: Mapping[str, Any], step: str, job: Mapping[str, Any],
         renames: Mapping[Tuple[str, str], str]) -> Dict[str, Any]:
    obj = copy.deepcopy(dict(base))
    meta = obj.setdefault("metadata", {})
    meta["name"] = _name(meta.get("name", ""), str(job["name"]))
    annotations = _without_helm(meta.get("annotations"))
    annotations[ANNOTATION_WAVE] = str(STEP_WAVES[step])
    annotations[ANNOTATION_STEP] = step
    codes = exit_codes(job)
    if codes:
        annotations[ANNOTATION_EXIT_CODES] = codes
    meta["annotations"] = annotations
    meta["labels"] = _without_helm(meta.get("labels"))
    spec = obj.setdefault("spec", {})
    attempts = max(1, int(job.get("attempts") or 1))
    spec["backoffLimit"] = attempts - 1
    spec.pop("completions", None)
    spec.pop("parallelism", None)
    pod = spec.setdefault("template", {}).setdefault("spec", {})
    pod["restartPolicy"] = "Never"
    container = _main_container(pod, meta["name"])
    container["command"] = [str(a) for a in job["command"]]
    container.pop("args", None)
    container["terminationMessagePolicy"] = "FallbackToLogsOnError"
    allowed = sorted({0, *(int(c) for c in job.get("repeat_exit_codes") or [])})
    spec["podFailurePolicy"] = {"rules": [
        # The first exit that is not a success (nor a "run again") ends the Job: no retry of a failure.
        {"action": "FailJob", "onExitCodes": {"containerName": container["name"], "operator": "NotIn",
                                              "values": allowed}},
    ]}
    _rename(pod, renames)
    return obj


def exit_codes(job: Mapping[str, Any]) -> str:
    parts = []
    for key, word in (("warning_exit_codes", "warning"), ("repeat_exit_codes", "repeat")):
        codes = [str(int(c)) for c in job.get(key) or []]
        if codes:
            parts.append(f"{word}={','.join(codes)}")
    return ";".join(parts)


def _name(base: str, suffix: str) -> str:
    name = f"{base}-{suffix}"
    if len(name) > 63:
        raise PhaseError(f"Job name {name} is longer than 63 characters; name the release or service shorter")
    return name


def _main_container(pod: Dict[str, Any], name: str) -> Dict[str, Any]:
    containers = pod.get("containers") or []
    if len(containers) != 1:
        raise PhaseError(f"the chart's db-sync Job has {len(containers)} containers; {name} is made from a "
                         "db-sync Job with one")
    return containers[0]


def _rename(pod: Dict[str, Any], renames: Mapping[Tuple[str, str], str]) -> None:
    for vol in pod.get("volumes") or []:
        _swap(vol.get("secret"), "secretName", "Secret", renames)
        _swap(vol.get("configMap"), "name", "ConfigMap", renames)
        for src in (vol.get("projected") or {}).get("sources") or []:
            _swap(src.get("secret"), "name", "Secret", renames)
            _swap(src.get("configMap"), "name", "ConfigMap", renames)
    for container in _containers(pod):
        for env in container.get("env") or []:
            ref = env.get("valueFrom") or {}
            _swap(ref.get("secretKeyRef"), "name", "Secret", renames)
            _swap(ref.get("configMapKeyRef"), "name", "ConfigMap", renames)
        for env_from in container.get("envFrom") or []:
            _swap(env_from.get("secretRef"), "name", "Secret", renames)
            _swap(env_from.get("configMapRef"), "name", "ConfigMap", renames)


def _containers(pod: Mapping[str, Any]) -> Iterable[Dict[str, Any]]:
    return list(pod.get("initContainers") or []) + list(pod.get("containers") or [])


def _swap(ref: Optional[Dict[str, Any]], key: str, kind: str, renames: Mapping[Tuple[str, str], str]) -> None:
    if ref and (kind, ref.get(key)) in renames:
        ref[key] = renames[(kind, ref[key])]


def steps_of(objects: Iterable[Rendered]) -> Set[str]:
    """The migration steps among a phase's objects."""
    return {str(((r.obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_STEP))
            for r in objects if ANNOTATION_STEP in ((r.obj.get("metadata") or {}).get("annotations") or {})}
