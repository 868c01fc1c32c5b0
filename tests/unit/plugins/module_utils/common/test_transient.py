"""plugins/module_utils/common/transient.py: which failures a wait or a write tries again."""

from __future__ import annotations

import http.client
import ssl

import pytest
from kubernetes.client.rest import ApiException
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError, SSLError

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient


def _api(status: int) -> ApiException:
    return ApiException(status=status, reason="x")


def _wrapped(inner: BaseException) -> ApiException:
    """What the kubernetes client raises for an SSL failure: ApiException(status=0) from it."""
    try:
        try:
            raise inner
        except BaseException as exc:
            raise ApiException(status=0, reason=f"{type(exc).__name__}\n{exc}") from exc
    except ApiException as outer:
        return outer


@pytest.mark.parametrize("exc", [
    ProtocolError("Response ended prematurely"),
    ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer")),
    ConnectionResetError(104, "Connection reset by peer"),
    ConnectionRefusedError(111, "Connection refused"),
    BrokenPipeError(32, "Broken pipe"),
    http.client.IncompleteRead(b""),
    http.client.RemoteDisconnected("Remote end closed connection without response"),
    MaxRetryError(None, "/api", NewConnectionError(None, "Failed to establish a new connection: refused")),
    _api(500), _api(502), _api(503), _api(504), _api(429),
    _wrapped(SSLError("EOF occurred in violation of protocol")),
], ids=lambda e: type(e).__name__ + ":" + str(getattr(e, "status", "") or e)[:30])
def test_a_break_of_the_connection_or_a_momentary_answer_is_transient(exc: BaseException) -> None:
    assert transient.is_transient(exc)


@pytest.mark.parametrize("exc", [
    _api(400), _api(401), _api(403), _api(404), _api(409), _api(410), _api(422),
    _wrapped(SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer")),
    MaxRetryError(None, "/api", SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")),
    ssl.SSLCertVerificationError("certificate verify failed"),
    ValueError("not a network problem"),
    KeyError("metadata"),
], ids=lambda e: type(e).__name__ + ":" + str(getattr(e, "status", "") or e)[:30])
def test_a_terminal_answer_or_a_bug_is_not(exc: BaseException) -> None:
    assert not transient.is_transient(exc)


def test_the_backoff_doubles_and_is_bounded() -> None:
    assert [transient.backoff(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_a_description_is_one_short_line() -> None:
    text = transient.describe(ProtocolError("Response\\n ended " + "x" * 300))
    assert "\n" not in text and len(text) <= 160


def test_a_schema_refusal_is_a_500_but_no_blip() -> None:
    """A server-side apply with a field the installed CRD does not declare:
    the apiserver answers 500, and the same every time. Retried for a
    minute, it stalled every phase's start behind an old UpdateStatus CRD."""
    refused = ApiException(status=500, reason="Internal Server Error")
    refused.body = ('{"kind":"Status","message":"failed to create typed patch object (/cluster; '
                    'lifecycle.openstack.org/v1alpha1, Kind=UpdateStatus): errors:\\n  .status.sites: '
                    'field not declared in schema"}').encode()
    assert transient.schema_refusal(refused) and not transient.is_transient(refused)
    blip = ApiException(status=500, reason="Internal Server Error")
    blip.body = '{"kind":"Status","message":"etcdserver: leader changed"}'
    assert not transient.schema_refusal(blip) and transient.is_transient(blip)


def test_the_exception_classes_of_a_module_are_looked_up_only_once_it_is_loaded() -> None:
    """A failure is sorted by the classes of the modules that raised it; one
    never imported raised nothing, and is not imported to find out."""
    assert transient.loaded("http.client", "HTTPException", "IncompleteRead") == (
        http.client.HTTPException, http.client.IncompleteRead)
    assert transient.loaded("lcm_no_such_module", "AnyError") == ()
    assert not transient.is_transient(ValueError("nothing of a module not loaded"))
