"""A dynamic client over a few listed kinds, for the unit tests of what reads
many objects at once (drift/live.py, drift/records.py): each kind lists its
objects (filtered by namespace and a simple label selector) and answers a
server-side apply from a function the test gives; every request is kept."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple

from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from support.fake_api import Answer

Apply = Callable[[Dict[str, Any]], Dict[str, Any]]


def selected(labels: Dict[str, str], selector: Optional[str]) -> bool:
    """`a=b,c!=d` as the apiserver reads it (equality terms only)."""
    for term in (selector or "").split(","):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
    return True


class FakeKind:
    """One kind: its objects, and what a server-side apply answers (`apply`:
    the object the apiserver would return for a body, or an exception to raise)."""

    def __init__(self, api_version: str, kind: str, items: List[Dict[str, Any]], namespaced: bool = True,
                 apply: Any = None, refused: Optional[Dict[Optional[str], Exception]] = None) -> None:
        self.api_version, self.kind, self.namespaced = api_version, kind, namespaced
        self.name = kind.lower() + "s"
        self.items, self.apply, self.refused = items, apply, dict(refused or {})
        self.lists: List[Dict[str, Any]] = []
        self.applies: List[Dict[str, Any]] = []

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None, limit: Optional[int] = None,
            _continue: Optional[str] = None, serializer: Any = None, **extra: Any) -> Any:
        assert serializer is plain and not extra
        self.lists.append({"namespace": namespace, "selector": label_selector, "limit": limit})
        if namespace in self.refused:
            raise self.refused[namespace]
        # As the apiserver answers: the items without their apiVersion and kind, which the serializer restores.
        items = [{k: copy.deepcopy(v) for k, v in i.items() if k not in ("apiVersion", "kind")} for i in self.items
                 if (namespace is None or i["metadata"].get("namespace") == namespace)
                 and selected(i["metadata"].get("labels") or {}, label_selector)]
        return serializer(None, {"apiVersion": self.api_version, "kind": f"{self.kind}List", "metadata": {},
                                 "items": items})

    def server_side_apply(self, body: Dict[str, Any], name: str, namespace: Optional[str], field_manager: str,
                          force_conflicts: bool, serializer: Any, **kwargs: Any) -> Answer:
        assert serializer is plain and name == body["metadata"]["name"]
        self.applies.append({"body": copy.deepcopy(body), "namespace": namespace, "manager": field_manager,
                             "force": force_conflicts, **kwargs})
        if isinstance(self.apply, Exception):
            raise self.apply
        assert self.apply is not None, f"no server-side apply expected of {self.kind} {name}"
        return Answer(self.apply(copy.deepcopy(body)))


class FakeCluster:
    """dyn.resources.get(api_version=..., kind=...): the kind given, or ResourceNotFoundError."""

    def __init__(self, *kinds: FakeKind) -> None:
        self.resources = self
        self.kinds: Dict[Tuple[str, str], FakeKind] = {(k.api_version, k.kind): k for k in kinds}
        self.asked: List[Tuple[str, str]] = []

    def get(self, api_version: str, kind: str) -> FakeKind:
        self.asked.append((api_version, kind))
        if (api_version, kind) not in self.kinds:
            raise ResourceNotFoundError(f"no {kind} in {api_version}")
        return self.kinds[api_version, kind]
