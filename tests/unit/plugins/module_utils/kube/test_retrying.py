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


class _Body:
    """A response whose body arrives after call_api returned (kubernetes >= 34):
    the first read of each response is cut, as a dropped connection cuts it."""

    def __init__(self, api: "_LateApi") -> None:
        self.api, self.response, self.data = api, object(), None

    def read(self) -> bytes:
        self.api.reads += 1
        if self.api.cuts:
            self.api.cuts -= 1
            raise transient_incomplete()
        self.data = b'{"kind": "PodList"}'
        return self.data


def transient_incomplete() -> BaseException:
    from urllib3.exceptions import IncompleteRead  # pylint: disable=import-outside-toplevel
    return IncompleteRead(1295, 753)


class _LateApi:
    def __init__(self, cuts: int) -> None:
        self.cuts, self.sent, self.reads = cuts, 0, 0

    def call_api(self, method: str, url: str, *_args: Any, **_kw: Any) -> _Body:
        self.sent += 1
        return _Body(self)


def test_a_body_cut_after_the_headers_sends_the_request_again_and_hands_over_the_body_read() -> None:
    api = _LateApi(cuts=2)
    dyn = retrying.retrying(_Dyn(api))  # type: ignore[arg-type]
    response = dyn.client.call_api("GET", "https://apiserver/api/v1/namespaces/openstack/pods?limit=500")
    assert (api.sent, api.reads) == (3, 3)
    assert response.data == b'{"kind": "PodList"}'


@pytest.mark.parametrize("url", [
    "https://apiserver/api/v1/namespaces/openstack/pods?watch=True&resourceVersion=12",
    "https://apiserver/api/v1/namespaces/openstack/pods/p/log?follow=true",
])
def test_a_stream_is_left_for_its_reader(url: str) -> None:
    api = _LateApi(cuts=1)
    dyn = retrying.retrying(_Dyn(api))  # type: ignore[arg-type]
    response = dyn.client.call_api("GET", url)
    assert (api.sent, api.reads, response.data) == (1, 0, None)


def test_an_older_client_streaming_without_preload_is_left_alone() -> None:
    api = _LateApi(cuts=1)
    dyn = retrying.retrying(_Dyn(api))  # type: ignore[arg-type]
    dyn.client.call_api("GET", "/api/v1/pods", _preload_content=False)
    assert (api.sent, api.reads) == (1, 0)


# -- the first contact: a short connect timeout, a brief retry ------------------------
class _KwApi(_Api):
    def __init__(self, failures: List[BaseException]) -> None:
        super().__init__(failures)
        self.kwargs: List[Any] = []

    def call_api(self, url: str, method: str, **kw: Any) -> str:
        self.kwargs.append(kw.get("_request_timeout"))
        return super().call_api(url, method, **kw)


@pytest.fixture
def budgets(monkeypatch: pytest.MonkeyPatch) -> List[float]:
    seen: List[float] = []
    real = transient.retry

    def retry(call: Any, budget: float = 0) -> Any:
        seen.append(budget)
        return real(call, budget)  # no_pause's: no sleeping
    monkeypatch.setattr(transient, "retry", retry)
    return seen


def test_until_the_apiserver_answered_once_requests_connect_briefly_and_retry_briefly(budgets: List[float]) -> None:
    api = _KwApi([ConnectionRefusedError(111, "refused")])
    dyn = retrying.retrying(_Dyn(api))
    dyn.client.call_api("/version", "GET")
    dyn.client.call_api("/api/v1/pods", "GET")
    dyn.client.call_api("/api/v1/pods", "GET", _request_timeout=55)
    assert budgets == [retrying.FIRST_CONTACT_SECONDS, retrying.REQUEST_SECONDS, retrying.REQUEST_SECONDS]
    first = (retrying.FIRST_CONNECT_SECONDS, None)
    assert api.kwargs == [first, first, None, 55]  # the refused try and its retry, then the client's own
    assert retrying.FIRST_CONTACT_SECONDS < retrying.REQUEST_SECONDS


def test_an_http_answer_is_a_contact_and_a_client_that_had_one_retries_long(budgets: List[float]) -> None:
    class NotFound(Exception):
        status = 404
    dyn = retrying.retrying(_Dyn(_KwApi([NotFound("no")])))
    with pytest.raises(NotFound):
        dyn.client.call_api("/api/v1/namespaces/x/pods/y", "GET")
    dyn.client.call_api("/api/v1/pods", "GET")
    assert budgets == [retrying.FIRST_CONTACT_SECONDS, retrying.REQUEST_SECONDS]
    contacted = _KwApi([])
    contacted._lcm_contacted = True  # type: ignore[attr-defined]  # its construction was answered
    retrying.retrying(_Dyn(contacted)).client.call_api("/api/v1/pods", "GET")
    assert budgets[-1] == retrying.REQUEST_SECONDS and contacted.kwargs == [None]


def test_a_first_contact_that_keeps_failing_ends_with_its_failure(budgets: List[float]) -> None:
    api = _KwApi([ConnectionRefusedError(111, "refused")] * 50)
    with pytest.raises(ConnectionRefusedError):
        retrying.retrying(_Dyn(api)).client.call_api("/version", "GET")
    assert budgets == [retrying.FIRST_CONTACT_SECONDS]
