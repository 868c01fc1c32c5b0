# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which failures of a call to the apiserver are worth trying again.

A dropped TCP connection, a watch response that ends early, an apiserver that
restarts (connection refused or reset while it comes back, 5xx while its
storage reconnects), 429 from priority and fairness: none of them says
anything about the objects a phase waits for, so a wait or a status write
tries again, with bounded backoff, until its own deadline. A terminal answer
(403, 404, 409, 422, a certificate that does not verify) is not retried.

The python client does not retry these itself: urllib3 retries connection
set-up, not a response cut off in the middle, and nothing retries a watch.
"""

from __future__ import annotations

import socket
import sys
import time
from typing import Any, Callable, Tuple, Type, TypeVar

T = TypeVar("T")

URLLIB3_TRANSIENT = ("ProtocolError", "NewConnectionError", "ConnectTimeoutError", "ReadTimeoutError",
                     "MaxRetryError", "IncompleteRead")

TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 8.0
# How long one idempotent call (a read, a server-side apply, a status merge
# patch) keeps trying through transient failures: an apiserver restart
# takes seconds, an etcd leader election about as long.
RETRY_SECONDS = 60.0


def schema_refusal(exc: BaseException) -> bool:
    """A server-side apply the apiserver cannot type against the object's
    schema (a field the installed CRD does not declare): it answers 500, but
    the same request fails the same way every time, so it is no blip."""
    body = getattr(exc, "body", None) or ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return "failed to create typed patch object" in str(body)


def is_transient(exc: BaseException) -> bool:
    """True for a failure of the connection or a momentary server answer."""
    status = getattr(exc, "status", None)
    if isinstance(status, int) and status:
        return status in TRANSIENT_STATUS and not schema_refusal(exc)
    if certificate_problem(exc):
        return False
    if isinstance(exc, (ConnectionError, socket.timeout) + loaded("http.client", "HTTPException") +
                  loaded("ssl", "SSLEOFError")):
        return True
    if isinstance(exc, loaded("urllib3.exceptions", *URLLIB3_TRANSIENT)):
        reason = getattr(exc, "reason", None)
        return reason is None or reason is exc or not certificate_problem(reason)
    if isinstance(exc, loaded("urllib3.exceptions", "SSLError")):
        return not certificate_problem(exc)
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and is_transient(cause)


def retry(call: Callable[[], T], budget: float = RETRY_SECONDS,
          sleep: Callable[[float], Any] = time.sleep, clock: Callable[[], float] = time.monotonic) -> T:
    """Call `call` until it returns, a failure is not transient, or `budget`
    seconds have passed (then the last failure is raised). Only for calls
    that may be repeated: reads, server-side applies, merge patches."""
    end = clock() + budget
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - sorted by is_transient, re-raised otherwise
            attempt += 1
            pause = backoff(attempt)
            if not is_transient(exc) or clock() + pause > end:
                raise
            sleep(pause)


def backoff(attempt: int) -> float:
    """Seconds before attempt `attempt` (1, 2, ...): 0.5, 1, 2, 4, 8, 8, ..."""
    return min(BACKOFF_MAX, BACKOFF_FIRST * (2 ** max(0, attempt - 1)))


def describe(exc: BaseException) -> str:
    """One line for a progress message: the exception's own words, shortened."""
    text = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


def certificate_problem(exc: Any) -> bool:
    """A TLS certificate that does not verify: terminal, and worth its own message."""
    if isinstance(exc, loaded("ssl", "SSLCertVerificationError")):
        return True
    text = str(exc)
    return "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text


def loaded(module: str, *names: str) -> Tuple[Type[BaseException], ...]:
    """The exception classes `names` of `module`, or none if nothing imported
    the module: an exception of a module never loaded cannot have been raised.
    Looked up when a failure is sorted rather than imported here, because
    urllib3, http.client and ssl take about 30 ms to load, and a helm_release
    that finds its release as asked never talks to the apiserver at all."""
    found = sys.modules.get(module)
    return tuple(getattr(found, name) for name in names) if found is not None else ()
