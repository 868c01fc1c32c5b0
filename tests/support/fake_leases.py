"""An apiserver's Leases in memory, for unit tests of kube/lease.py and its users:
a dynamic client that knows one kind, with the resourceVersion checks and
409s of the real one."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, Optional

from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError, DynamicApiError, NotFoundError


def error(cls: type, status: int) -> DynamicApiError:
    exc = ApiException(status=status, reason="x")
    exc.body = json.dumps({"kind": "Status", "code": status, "message": "x"})
    return cls(exc)


class _R:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self.data)


class Leases:
    """One namespace's Leases with resourceVersion checks, as the apiserver does."""

    def __init__(self) -> None:
        self.items: Dict[str, Dict[str, Any]] = {}
        self.version = 0
        self.race: Optional[Dict[str, Any]] = None  # written by "another run" just before our write
        self.refuse: Optional[DynamicApiError] = None  # every call fails with it (403, 404 namespace)
        self.reads = 0  # the gets sent

    def get(self, name: str, namespace: str) -> _R:
        self.reads += 1
        if self.refuse is not None:
            raise self.refuse
        if name not in self.items:
            raise error(NotFoundError, 404)
        return _R(self.items[name])

    def _store(self, body: Dict[str, Any]) -> None:
        self.version += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.version)
        self.items[body["metadata"]["name"]] = body

    def create(self, body: Dict[str, Any], namespace: str) -> None:
        if self.refuse is not None:
            raise self.refuse
        if self.race is not None:
            self._store(self.race)
            self.race = None
        if body["metadata"]["name"] in self.items:
            raise error(ConflictError, 409)
        self._store(body)

    def replace(self, body: Dict[str, Any], name: str, namespace: str) -> None:
        if self.race is not None:
            self._store(self.race)
            self.race = None
        if body["metadata"].get("resourceVersion") != self.items[name]["metadata"]["resourceVersion"]:
            raise error(ConflictError, 409)
        self._store(body)


class Dyn:
    def __init__(self, leases: Leases) -> None:
        self.resources = self
        self.leases = leases

    def get(self, api_version: str, kind: str) -> Leases:
        assert (api_version, kind) == ("coordination.k8s.io/v1", "Lease")
        return self.leases
