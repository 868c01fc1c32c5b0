"""plugins/module_utils/phase/gone.py: whether a phase whose object was
deleted under its wait has lost its reason to wait (its Phase or its
namespace deleted), asked with at most two reads."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ForbiddenError, NotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.phase.gone import reason

KEY = ("Job", "keystone-db-sync")


def _exc(cls: Any, status: int) -> Any:
    exc = ApiException(status=status, reason="Reason")
    exc.body = b'{"kind":"Status","message":"m","code":%d}' % status
    return cls(exc)


class _Reads:
    """The Phase's and the namespace's GET, each an object or an exception."""

    def __init__(self, phase: Any, namespace: Any) -> None:
        self.answers = {"Phase": phase, "Namespace": namespace}
        self.asked: List[str] = []
        self.resources = self

    def get(self, api_version: str = "", kind: str = "", name: str = "", namespace: Optional[str] = None) -> Any:
        if kind:
            return SimpleNamespace(get=lambda name: self._read("Namespace"))
        return self._read("Phase")

    def _read(self, kind: str) -> Any:
        self.asked.append(kind)
        answer = self.answers[kind]
        if isinstance(answer, Exception):
            raise answer
        return SimpleNamespace(to_dict=lambda: answer)


def _reason(phase: Any, namespace: Any) -> tuple:
    reads = _Reads(phase, namespace)
    return reason(reads, reads, "openstack", "keystone-install-1a2b", KEY), reads.asked


LIVE: Dict[str, Any] = {"metadata": {"name": "x"}}
DELETING: Dict[str, Any] = {"metadata": {"name": "x", "deletionTimestamp": "2026-11-26T09:00:00Z"}}
TERMINATING: Dict[str, Any] = {"metadata": {"name": "openstack"}, "status": {"phase": "Terminating"}}


@pytest.mark.parametrize("phase, namespace, said", [
    (_exc(NotFoundError, 404), LIVE, "the Phase keystone-install-1a2b was deleted"),
    (DELETING, LIVE, "the Phase keystone-install-1a2b is being deleted"),
    (LIVE, TERMINATING, "namespace openstack is being deleted"),
    (LIVE, _exc(NotFoundError, 404), "namespace openstack was deleted"),
    (_exc(ForbiddenError, 403), TERMINATING, "namespace openstack is being deleted"),
])
def test_a_phase_or_namespace_deleted_ends_the_wait_saying_which(phase: Any, namespace: Any, said: str) -> None:
    text, asked = _reason(phase, namespace)
    assert text is not None and text.startswith(said), text
    assert text.endswith("nothing is left to wait for") and asked[0] == "Phase"


@pytest.mark.parametrize("namespace", [LIVE, _exc(ForbiddenError, 403)])
def test_an_object_deleted_by_hand_lets_the_wait_go_on(namespace: Any) -> None:
    text, asked = _reason(LIVE, namespace)
    assert text is None and asked == ["Phase", "Namespace"]


def test_a_phase_found_gone_asks_nothing_more() -> None:
    assert _reason(_exc(NotFoundError, 404), LIVE)[1] == ["Phase"]
