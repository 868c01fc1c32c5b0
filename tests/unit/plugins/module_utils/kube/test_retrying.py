"""retrying: every request of a module's client survives a blip."""

from __future__ import annotations

from typing import Any, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.kube import retrying


class _Api:
    def __init__(self, failures: List[BaseException]) -> None:
        self.failures, self.sent = list(failures), 0

    def call_api(self, url: str, method: str, **_kw: Any) -> str:
        self.sent += 1
        if self.failures:
            raise self.failures.pop(0)
        return f"{method} {url}"


class _Dyn:
    def __init__(self, api: _Api) -> None:
        self.client = api


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    real = transient.retry
    monkeypatch.setattr(transient, "retry", lambda call, budget=0: real(call, budget, sleep=lambda _s: None))


def test_a_request_cut_short_is_sent_again() -> None:
    api = _Api([ConnectionResetError(104, "Connection reset by peer"), ConnectionRefusedError(111, "refused")])
    dyn = retrying.retrying(_Dyn(api))
    assert dyn.client.call_api("/api/v1/namespaces/openstack/pods", "GET") == "GET /api/v1/namespaces/openstack/pods"
    assert api.sent == 3


def test_a_terminal_answer_is_not_sent_again_and_wrapping_twice_is_once() -> None:
    class Forbidden(Exception):
        status = 403
    api = _Api([Forbidden("forbidden")])
    dyn = retrying.retrying(retrying.retrying(_Dyn(api)))
    with pytest.raises(Forbidden):
        dyn.client.call_api("/api/v1/secrets", "GET")
    assert api.sent == 1
