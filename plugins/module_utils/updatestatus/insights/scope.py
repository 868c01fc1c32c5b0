# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which service an object belongs to.

A service is a ServiceLifecycle (namespace + name). In its namespace it owns:

- objects labelled ``lifecycle.openstack.org/service: <spec.service>`` (Phases
  and everything a Phase applied);
- objects annotated ``meta.helm.sh/release-name: <spec.release>`` (what its
  Helm release manages);
- pods of those Deployments (their ``spec.selector.matchLabels``) and Jobs
  (the ``job-name`` label, or the owner reference);
- Helm's release records (Secrets, or ConfigMaps) labelled ``name: <spec.release>``.

Objects of no service are not looked at. An object of a Phase that is no
longer current (a Phase of an earlier flow) is history, not a problem now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_spec
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import (
    FlowRecord, LifecycleStatus, ServiceLifecycle, lifecycle_flow, lifecycle_spec, lifecycle_status,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    Snapshot, annotations, labels, name_of, namespace_of,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import started_order
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import LABEL_PHASE, LABEL_SERVICE

RELEASE_ANNOTATION = "meta.helm.sh/release-name"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")


@dataclass
class Service:
    namespace: str
    name: str  # the ServiceLifecycle's name
    service: str  # spec.service: the value of the service label
    release: str
    lifecycle: ServiceLifecycle

    @property
    def key(self) -> Tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def status(self) -> LifecycleStatus:
        return lifecycle_status(self.lifecycle)

    @property
    def flow(self) -> FlowRecord:
        return lifecycle_flow(self.lifecycle)


def service_from(lifecycle: ServiceLifecycle) -> Service:
    spec = lifecycle_spec(lifecycle)
    name = name_of(lifecycle)
    service = str(spec.get("service") or name)
    return Service(namespace_of(lifecycle), name, service, str(spec.get("release") or service), dict(lifecycle))


class Scope:
    """The snapshot's objects indexed by the service they belong to."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.services = sorted((service_from(lc) for lc in snapshot.lifecycles), key=lambda s: s.key)
        self._by_ns: Dict[str, List[Service]] = {}
        for svc in self.services:
            self._by_ns.setdefault(svc.namespace, []).append(svc)
        self._jobs = {(namespace_of(j), name_of(j)): j for j in snapshot.jobs}
        self._phases = {(namespace_of(p), name_of(p)): p for p in snapshot.phases}
        self._current = self._current_phases()

    # -- membership ----------------------------------------------------------
    def service_of(self, obj: Mapping[str, Any]) -> Optional[Service]:
        """The service an object belongs to by its label or its Helm release."""
        candidates = self._by_ns.get(namespace_of(obj), [])
        value = labels(obj).get(LABEL_SERVICE)
        if value is None and obj.get("kind") == "Phase":
            value = phase_spec(obj).get("service")
        for svc in candidates:
            if value is not None and value == svc.service:
                return svc
        release = annotations(obj).get(RELEASE_ANNOTATION)
        for svc in candidates:
            if release is not None and release == svc.release:
                return svc
        return None

    def pod_owner(self, pod: Mapping[str, Any]) -> Tuple[Optional[Service], str, Optional[Dict[str, Any]]]:
        """The pod's service, and the kind and object of the Deployment or Job that runs it."""
        namespace, pod_labels = namespace_of(pod), labels(pod)
        job_names = [pod_labels[k] for k in JOB_NAME_LABELS if k in pod_labels]
        job_names += [r.get("name") for r in (pod.get("metadata") or {}).get("ownerReferences") or []
                      if r.get("kind") == "Job"]
        for job_name in job_names:
            job = self._jobs.get((namespace, str(job_name)))
            if job is not None:
                return self.service_of(job) or self.service_of(pod), "Job", job
        for deployment in sorted(self.snapshot.deployments, key=name_of):
            if namespace_of(deployment) != namespace:
                continue
            match = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            if match and all(pod_labels.get(k) == v for k, v in match.items()):
                svc = self.service_of(deployment)
                if svc is not None:
                    return svc, "Deployment", deployment
        return self.service_of(pod), "", None

    def in_service(self, objects: List[dict]) -> List[Tuple[Service, dict]]:
        """(service, object) for each object that belongs to a service, by name."""
        out = []
        for obj in sorted(objects, key=lambda o: (namespace_of(o), name_of(o))):
            svc = self.service_of(obj)
            if svc is not None:
                out.append((svc, obj))
        return out

    def phases_of(self, svc: Service) -> List[Phase]:
        """The service's Phases, oldest first."""
        return sorted((p for p in self.snapshot.phases if self.service_of(p) is svc), key=started_order)

    def releases_of(self, svc: Service) -> List[dict]:
        """Helm's release records (Secrets or ConfigMaps) of the service's release, by revision."""
        found = [s for s in self.snapshot.releases
                 if namespace_of(s) == svc.namespace and labels(s).get("name") == svc.release]
        return sorted(found, key=revision)

    # -- what is current -----------------------------------------------------
    def is_current(self, phase: Mapping[str, Any]) -> bool:
        return (namespace_of(phase), name_of(phase)) in self._current

    def of_current_phase(self, obj: Mapping[str, Any]) -> bool:
        """False for an object that a Phase of an earlier flow applied."""
        phase_name = labels(obj).get(LABEL_PHASE)
        if not phase_name:
            return True
        key = (namespace_of(obj), phase_name)
        return key not in self._phases or key in self._current

    def _current_phases(self) -> Set[Tuple[str, str]]:
        """Phases of the service's latest flow; and a Phase run outside any flow
        while it is the newest of its type for its service."""
        current: Set[Tuple[str, str]] = set()
        newest: Dict[Tuple[str, str, str], Phase] = {}
        for phase in sorted(self.snapshot.phases, key=started_order):
            svc = self.service_of(phase)
            if svc is None:
                continue
            spec = phase_spec(phase)
            flow_id = f"{svc.flow.get('name')}/{svc.flow.get('startedAt')}"
            if name_of(phase) in (svc.flow.get("phases") or []) or (svc.flow and spec.get("flow") == flow_id):
                current.add((namespace_of(phase), name_of(phase)))
            newest[(svc.namespace, svc.name, str(spec.get("type")))] = phase
        current.update((namespace_of(p), name_of(p)) for p in newest.values()
                       if not phase_spec(p).get("flow"))
        return current


def revision(secret: Mapping[str, Any]) -> int:
    try:
        return int(labels(secret).get("version") or 0)
    except ValueError:
        return 0
