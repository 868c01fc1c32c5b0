"""plugins/module_utils/kube/namespace_ensure.py: a flow's namespace made at
its start when it is not there, left when it is, taken to exist when the
credentials may not read it, and an error naming it when it cannot be made."""

from __future__ import annotations

from typing import Any, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError, ForbiddenError, NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.kube import namespace_ensure
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError


def _exc(cls: Any, status: int) -> Any:
    exc = ApiException(status=status, reason="Reason")
    exc.body = b'{"kind":"Status","message":"m","code":%d}' % status
    return cls(exc)


class _Made:
    """Namespaces: get() and create() answer as scripted."""

    def __init__(self, answer: Optional[BaseException], create_answer: Optional[BaseException] = None) -> None:
        self.answer, self.create_answer = answer, create_answer
        self.created: List[str] = []
        self.resources = self

    def get(self, name: str = "", api_version: str = "", kind: str = "") -> Any:
        if kind:
            return self
        if self.answer is not None:
            raise self.answer
        return {"metadata": {"name": name}}

    def create(self, body: Any) -> Any:
        self.created.append(body["metadata"]["name"])
        if self.create_answer is not None:
            raise self.create_answer
        return body


def _ensure(get_answer: Optional[BaseException], create_answer: Optional[BaseException] = None,
            dry_run: bool = False) -> tuple:
    dyn = _Made(get_answer, create_answer)
    return namespace_ensure.ensure(dyn, "t-new", dry_run), dyn.created


def test_ensure_makes_a_namespace_that_is_not_there() -> None:
    assert _ensure(_exc(NotFoundError, 404)) == (namespace_ensure.CREATED, ["t-new"])


def test_ensure_leaves_a_namespace_that_is_there() -> None:
    assert _ensure(None) == (namespace_ensure.PRESENT, [])


def test_ensure_in_check_mode_says_it_would_make_it_and_makes_nothing() -> None:
    assert _ensure(_exc(NotFoundError, 404), dry_run=True) == (namespace_ensure.CREATED, [])


def test_ensure_takes_a_namespace_it_may_not_read_to_exist() -> None:
    assert _ensure(_exc(ForbiddenError, 403)) == (namespace_ensure.UNREADABLE, [])


def test_ensure_finds_a_namespace_made_meanwhile_present() -> None:
    assert _ensure(_exc(NotFoundError, 404), _exc(ConflictError, 409)) == (namespace_ensure.PRESENT, ["t-new"])


def test_ensure_names_the_namespace_when_it_may_not_make_it() -> None:
    denied = ApiException(status=403, reason="Forbidden")
    denied.body = (b'{"kind":"Status","code":403,"message":"namespaces is forbidden: User \\"system:serviceaccount:a:b\\" '
                   b'cannot create resource \\"namespaces\\" in API group \\"\\" at the cluster scope"}')
    with pytest.raises(KubeError, match="namespaces"):
        _ensure(_exc(NotFoundError, 404), ForbiddenError(denied))
