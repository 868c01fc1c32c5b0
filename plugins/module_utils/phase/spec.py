# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a phase run is: its request, its Phase spec, its hash and its name.

The name is derived from the hash, so running the same phase twice finds the
same Phase: Succeeded means nothing to do, Running means attach to it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, PhaseSource, PhaseSpec
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import FailurePolicy
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    API_VERSION, LABEL_SERVICE, LABEL_SPEC_HASH, LABEL_TYPE, PHASE_KIND, PHASE_TYPES,
)

# The per-type block of each phase type: module option -> Phase spec field.
TYPE_BLOCKS = {
    "upgrade": ("upgrade", {"backup_database": "backupDatabase", "backup_timeout": "backupTimeoutSeconds",
                            "backup": "backup", "missing_job": "missingJob", "jobs": "jobs"}),
    "check": ("check", {"jobs": "jobs"}),
    "contract": ("contract", {"jobs": "jobs"}),
    "rollback": ("rollback", {"to_revision": "toRevision", "restore_database": "restoreDatabase",
                              "backup_ref": "backupRef", "backup": "backup", "missing_job": "missingJob"}),
    "uninstall": ("uninstall", {"purge_database": "purgeDatabase", "keep_history": "keepHistory",
                                "missing_job": "missingJob"}),
    "test": ("test", {"timeout": "timeoutSeconds"}),
    "trafficdrain": ("traffic", {"backend": "backend", "steps": "steps",
                                 "drain_grace_seconds": "drainGraceSeconds", "target": "target",
                                 "selector_label": "selectorLabel", "track": "track", "from_track": "fromTrack",
                                 "fallback_track": "fallbackTrack", "canary_service": "canaryService",
                                 "canary_port": "canaryPort", "from_weight": "fromWeight"}),
    "trafficrollout": ("traffic", {"backend": "backend", "steps": "steps",
                                   "drain_grace_seconds": "drainGraceSeconds", "target": "target",
                                   "selector_label": "selectorLabel", "track": "track", "from_track": "fromTrack",
                                   "min_ready": "minReady", "canary_service": "canaryService",
                                   "canary_port": "canaryPort", "from_weight": "fromWeight",
                                   "pause_seconds": "pauseSeconds", "check": "check"}),
}
# Blocks every phase type takes: module option -> Phase spec field. Not part
# of a phase's identity: changing how failures are judged does not make a
# Succeeded phase run again.
COMMON_BLOCKS = {
    "failure": ("failure", {"threshold": "threshold", "unschedulable_grace": "unschedulableGraceSeconds"}),
}
BLOCK_NAMES = ("upgrade", "check", "contract", "rollback", "uninstall", "test", "traffic") + tuple(COMMON_BLOCKS)
# A migration Job's keys (common/openstack_upgrade.JobSpec): option -> Phase spec field.
JOB_FIELDS = {"step": "step", "name": "name", "command": "command", "warning_exit_codes": "warningExitCodes",
              "repeat_exit_codes": "repeatExitCodes", "attempts": "attempts"}
# Fields of a type's block that say how to run it, not what it is: the same
# phase with another of these is the same run (steps.MISSING_JOB_OPTION).
NOT_IDENTITY = ("missingJob",)


@dataclass
class Source:
    chart: Optional[str] = None
    chart_version: Optional[str] = None
    values: Optional[Mapping[str, Any]] = None
    values_files: Sequence[str] = ()
    templates: Optional[Sequence[str]] = None
    selection: Optional[str] = None
    stage_value: str = "lifecycle.phase"
    manifests: Optional[Sequence[Any]] = None
    # Render with the values of the deployed Helm release underneath `values`
    # (a rollback renders its restore job as the revision it returns to).
    values_from_release: bool = False

    @property
    def mode(self) -> str:
        if self.selection:
            return self.selection
        return "manifests" if self.manifests is not None and not self.chart else "templates"


@dataclass
class PhaseRequest:
    type: str
    service: str
    release: str
    namespace: str
    source: Source = field(default_factory=Source)
    target_version: str = ""
    # The Helm release revision the phase runs against: part of its identity,
    # so the same phase after a rollback (a new revision) is a new run.
    release_revision: Optional[int] = None
    # The flow (name/startedAt) running on the service, if any: a phase is run
    # once per flow, so a re-run of an interrupted flow resumes or skips it.
    flow_id: str = ""
    # The per-type blocks as given, e.g. {"upgrade": {"backup_database": True}}.
    blocks: Dict[str, Optional[Dict[str, Any]]] = field(default_factory=dict)
    timeout: int = 600
    wait: bool = True
    name: Optional[str] = None
    helm_binary: Optional[str] = None

    def validate(self) -> None:
        if self.type not in PHASE_TYPES:
            raise InputError(f"unknown phase type {self.type!r}; use one of {', '.join(PHASE_TYPES)}")
        if self.timeout < 1:
            raise InputError(f"timeout must be at least 1 second, not {self.timeout}")
        if self.source.values is not None and not isinstance(self.source.values, Mapping):
            raise InputError(f"source.values must be a mapping of chart values, not "
                             f"{type(self.source.values).__name__}")
        if self.source.mode != "manifests" and not self.source.chart:
            raise InputError("source.chart is required unless source.manifests gives the objects")
        if self.source.chart and not _looks_remote(self.source.chart) and not os.path.exists(self.source.chart):
            raise InputError(f"chart {self.source.chart} does not exist; give a chart directory or "
                             ".tgz path, repo/chart after `helm repo add`, or an oci:// reference")
        if self.type == "rollback" and self.options.get("restore_database") and not self.options.get("backup_ref"):
            raise InputError("rollback.restore_database needs rollback.backup_ref: the backup_ref an upgrade "
                             "Phase recorded (lcm.openstack.phase_info lists it)")
        backup = self.options.get("backup") or {}
        if not isinstance(backup, Mapping):
            raise InputError(f"{self.type}.backup must be a mapping (cronjob, namespace, databases, node)")
        names = backup.get("databases")
        if names is not None and (isinstance(names, str) or not isinstance(names, Sequence)
                                  or not all(isinstance(n, str) and n for n in names)):
            raise InputError(f"{self.type}.backup.databases must be a list of database names, "
                             "such as [nova, nova_cell0, nova_cell1]")
        if backup.get("namespace") and backup["namespace"] != self.namespace:
            raise InputError(f"{self.type}.backup.namespace is {backup['namespace']}, not {self.namespace}: "
                             "the backup CronJob must be in the service's namespace, where its Jobs run")
        _check_jobs(self.type, self.options.get("jobs"))
        policy = self.options.get("missing_job")
        if policy is not None and policy not in ("fail", "warn"):
            raise InputError(f"{self.type}.missing_job must be fail or warn, not {policy!r}")
        own = TYPE_BLOCKS.get(self.type, ("", {}))[0]
        for key, value in (self.blocks.get("failure") or {}).items():
            if value is not None and value < 0:
                raise InputError(f"failure.{key} must be 0 or more, not {value}")
        for block, value in self.blocks.items():
            if value and block != own and block not in COMMON_BLOCKS:
                raise InputError(f"option {block} does not apply to a {self.type} phase"
                                 + (f"; its options go under {own}" if own else ""))

    @property
    def backup_ref(self) -> str:
        """The database backup this phase takes (upgrade) or restores (rollback)."""
        opts = self.options
        if self.type == "upgrade" and opts.get("backup_database"):
            return new_backup_ref(self)
        if self.type == "rollback" and opts.get("restore_database"):
            return str(opts.get("backup_ref") or "")
        return ""

    @property
    def failure_policy(self) -> FailurePolicy:
        """How the phase's waits judge failing and unschedulable pods."""
        given = self.blocks.get("failure") or {}
        return FailurePolicy(**{k: given[k] for k in COMMON_BLOCKS["failure"][1] if given.get(k) is not None})

    @property
    def options(self) -> Dict[str, Any]:
        """The options of this phase type's block; a nested block (backup)
        without its unset keys, and left out when none is set."""
        own = TYPE_BLOCKS.get(self.type, ("", {}))[0]
        out: Dict[str, Any] = {}
        for key, value in (self.blocks.get(own) or {}).items():
            if isinstance(value, Mapping):
                value = {k: v for k, v in value.items() if v not in (None, "", [])} or None
            if value is not None:
                out[key] = value
        return out

    @options.setter
    def options(self, value: Mapping[str, Any]) -> None:
        """Replace this phase type's block: a step the render has nothing for
        (a database step of a chart with no database) is turned off in it, so
        the Phase's spec says what runs."""
        own = TYPE_BLOCKS.get(self.type, ("", {}))[0]
        if own:
            self.blocks[own] = dict(value)


def _check_jobs(phase_type: str, jobs: Any) -> None:
    if jobs is None:
        return
    if not isinstance(jobs, Sequence) or isinstance(jobs, str):
        raise InputError(f"{phase_type}.jobs must be a list of Jobs (step, name, command)")
    for job in jobs:
        command = job.get("command") if isinstance(job, Mapping) else None
        if not isinstance(command, Sequence) or isinstance(command, str) or not command or not job.get("name"):
            raise InputError(f"{phase_type}.jobs: each Job needs a name and a command (a list of arguments), "
                             f"not {job!r}")


def _looks_remote(chart: str) -> bool:
    return chart.startswith(("oci://", "http://", "https://")) or (
        chart.count("/") == 1 and not chart.startswith((".", "/")) and not os.path.exists(chart))


def new_backup_ref(req: PhaseRequest) -> str:
    """A name for the backup an upgrade takes: stable across a resumed run (the
    chart renders it into the backup job), different for each upgrade."""
    # Not the release revision: a run interrupted after the Helm upgrade must
    # render the same backup job, and find the same Phase, when resumed.
    seed = digest([req.namespace, req.release, req.target_version, req.flow_id])[:8]
    version = "".join(c if c.isalnum() else "-" for c in str(req.target_version or "unversioned"))
    return f"{req.release}-{version}-{seed}".lower()


def digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def values_digest(source: Source) -> str:
    files = []
    for path in source.values_files:
        with open(path, "rb") as handle:
            files.append(hashlib.sha256(handle.read()).hexdigest())
    return digest({"values": source.values or {}, "files": files})


def build_spec(req: PhaseRequest, objects: List[Dict[str, Any]]) -> PhaseSpec:
    src = req.source
    source: PhaseSource = {"selection": src.mode, "manifestsDigest": digest(objects)}
    if src.chart:
        source.update(chart=src.chart, valuesDigest=values_digest(src))
        if src.values_from_release:
            source["valuesFromRelease"] = True
        if src.chart_version:
            source["chartVersion"] = src.chart_version
    if src.templates is not None:
        source["templates"] = list(src.templates)
    spec: PhaseSpec = {"type": req.type, "service": req.service, "release": req.release,
                       "timeoutSeconds": int(req.timeout), "source": source}
    if req.target_version:
        spec["targetVersion"] = str(req.target_version)
    if req.release_revision:
        spec["releaseRevision"] = int(req.release_revision)
    if req.flow_id:
        spec["flow"] = req.flow_id
    block_name, fields = TYPE_BLOCKS.get(req.type, ("", {}))
    block = {fields[k]: v for k, v in req.options.items() if v is not None and k in fields}
    if block.get("jobs"):
        block["jobs"] = [{JOB_FIELDS[k]: v for k, v in job.items() if k in JOB_FIELDS and v not in (None, [])}
                         for job in block["jobs"]]
    elif "jobs" in block:
        del block["jobs"]
    if block:
        spec[block_name] = block
    policy = req.failure_policy
    spec["failure"] = {"threshold": int(policy.threshold),
                       "unschedulableGraceSeconds": int(policy.unschedulable_grace)}
    return spec


# What makes two runs the same phase: who and what it is, and the objects it
# owns. Where the chart lies, how it was selected, the values that did not
# change those objects, and the timeout do not: moving the chart directory or
# raising the timeout must not run a Succeeded phase again.
IDENTITY = ("type", "service", "release", "targetVersion", "releaseRevision", "flow", "upgrade", "check", "contract",
            "rollback", "uninstall", "test", "traffic")


def spec_hash(spec: PhaseSpec) -> str:
    identity = {k: spec[k] for k in IDENTITY if k in spec}
    for block in ("upgrade", "rollback", "uninstall"):
        if isinstance(identity.get(block), dict):
            kept = {k: v for k, v in identity[block].items() if k not in NOT_IDENTITY}
            if kept:
                identity[block] = kept
            else:
                identity.pop(block)
    if spec.get("type") == "upgrade":
        # An upgrade runs before the release changes: the revision it saw is
        # gone once an interrupted run got as far as the Helm upgrade.
        identity.pop("releaseRevision", None)
    identity["objects"] = (spec.get("source") or {}).get("manifestsDigest")
    return digest(identity)[:16]


def phase_name(req: PhaseRequest, hash_: str) -> str:
    """<release>-<type>-<hash>: at most 63 characters, so it fits a label value."""
    if req.name:
        return req.name
    return f"{req.release[:38].rstrip('-')}-{req.type}-{hash_[:8]}"


def phase_body(req: PhaseRequest, spec: PhaseSpec, hash_: str) -> Phase:
    return {
        "apiVersion": API_VERSION,
        "kind": PHASE_KIND,
        "metadata": {
            "name": phase_name(req, hash_),
            "namespace": req.namespace,
            "labels": {LABEL_SERVICE: req.service, LABEL_TYPE: req.type, LABEL_SPEC_HASH: hash_,
                       "app.kubernetes.io/managed-by": "lcm.openstack"},
        },
        "spec": spec,
    }
