"""What happens to a namespace's pods while a flow runs: every pod seen, when
it was first seen and when it went (its DELETED event, the moment it was
gone), as a watch from a list's resourceVersion sees them, in a thread.
A 410 (the watch expired) lists again; a pod seen in no list and no event
was never there."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Dict, List, Optional

from kubernetes import dynamic, watch
from kubernetes.client.rest import ApiException


@dataclass
class Seen:
    name: str
    labels: Dict[str, str]
    image: str
    owner: str  # the kind of its controller: ReplicaSet, DaemonSet, StatefulSet, Job; '' for none
    created: datetime  # naive UTC, as support.site_run.when reads the API's stamps
    gone: Optional[datetime] = None  # when its DELETED event came


def _created(pod: Dict) -> datetime:
    return datetime.strptime(pod["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")


@dataclass
class PodEvents:
    dyn: dynamic.DynamicClient
    namespace: str
    label_selector: str
    pods: Dict[str, Seen] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._res = self.dyn.resources.get(api_version="v1", kind="Pod")

    def __enter__(self) -> "PodEvents":
        self._version = self._list()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=70)

    def _see(self, pod: Dict, gone: bool = False) -> None:
        meta = pod["metadata"]
        with self._lock:
            seen = self.pods.get(meta["name"])
            if seen is None:
                containers = (pod.get("spec") or {}).get("containers") or [{}]
                owner = next((r.get("kind", "") for r in meta.get("ownerReferences") or [] if r.get("controller")), "")
                seen = self.pods[meta["name"]] = Seen(meta["name"], dict(meta.get("labels") or {}),
                                                      containers[0].get("image", ""), owner, _created(pod))
            if gone and seen.gone is None:
                # naive UTC to the second, as the API stamps its objects and support.site_run.when reads them
                seen.gone = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)

    def _list(self) -> str:
        listed = self._res.get(namespace=self.namespace, label_selector=self.label_selector).to_dict()
        for pod in listed["items"]:
            self._see(pod)
        return listed["metadata"]["resourceVersion"]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                stream = watch.Watch().stream(self._res.get, namespace=self.namespace, serialize=False,
                                              label_selector=self.label_selector,
                                              resource_version=self._version, timeout_seconds=5)
                for event in stream:
                    obj = event["raw_object"]
                    if event["type"] == "ERROR":
                        if obj.get("code") == 410:
                            self._version = self._list()
                        break
                    self._version = obj["metadata"]["resourceVersion"]
                    self._see(obj, gone=event["type"] == "DELETED")
            except ApiException as exc:
                if exc.status != 410:
                    raise
                self._version = self._list()
            except OSError:  # a broken connection: watch again from where it was
                time.sleep(0.2)

    def workloads(self) -> List[Seen]:
        """The pods of Deployments (by their ReplicaSets), DaemonSets and StatefulSets."""
        return [p for p in self.all() if p.owner in ("ReplicaSet", "DaemonSet", "StatefulSet")]

    def all(self) -> List[Seen]:
        with self._lock:
            return sorted(self.pods.values(), key=lambda s: s.created)
