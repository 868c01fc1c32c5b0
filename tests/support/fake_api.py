"""Pieces of the apiserver's answers the unit tests' fake resources share."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict

from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import api_exception


def status_error(status: int, reason: str = "Forbidden", message: str = "no") -> Exception:
    """The dynamic client's exception for an apiserver Status answer (404 NotFoundError, 403 ForbiddenError...)."""
    exc = ApiException(status=status, reason=reason)
    exc.body = json.dumps({"kind": "Status", "code": status, "reason": reason, "message": message}).encode()
    return api_exception(exc)


class Answer:
    """A response's to_dict(), a copy each time, as a fresh response would be."""

    def __init__(self, obj: Dict[str, Any]) -> None:
        self.obj = obj

    def to_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self.obj)


class OneKind:
    """A dynamic client that serves one kind: dyn.resources.get(...) is `res`."""

    def __init__(self, res: Any, api_version: str, kind: str) -> None:
        self.resources, self.res, self.api_version, self.kind = self, res, api_version, kind

    def get(self, api_version: str, kind: str) -> Any:
        assert (api_version, kind) == (self.api_version, self.kind)
        return self.res


class Kinds:
    """A dynamic client that serves several fake kinds, each by its `kind`."""

    def __init__(self, *res: Any) -> None:
        self.resources = self
        self.by_kind = {r.kind: r for r in res}

    def get(self, api_version: str, kind: str) -> Any:
        return self.by_kind[kind]
