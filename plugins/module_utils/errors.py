# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors the phase engine raises: each message says what is wrong and how to fix it."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils import transient

# The apiserver's words for an authorization denial (RBAC or another
# authorizer): ... is forbidden: User "alice" cannot create resource "jobs" in API group "batch" ...
# Admission refuses with 403 too ("pods "x" is forbidden: error looking up
# service account ..."): those are not about the credentials.
_FORBIDDEN = re.compile(r'is forbidden: User\b.*? cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]+)"'
                        r'(?: in API group "(?P<group>[^"]*)")?')


class PhaseError(Exception):
    """Bad input or an unusable cluster; nothing was left half-done."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details: Dict[str, Any] = details


class PhaseFailed(PhaseError):
    """The phase ran and failed; `details` holds the Phase status."""


def is_authorization_denial(exc: Any) -> bool:
    """A 403 because the credentials may not do it, not because admission refused the object."""
    return getattr(exc, "status", None) == 403 and _FORBIDDEN.search(_message(exc)) is not None


def api_error(exc: Any, verb: str, what: str, namespace: Optional[str] = None) -> PhaseError:
    """A readable error for a failed API call (kubernetes ApiException or DynamicApiError).
    Only an authorization denial is turned into "the credentials may not ...";
    any other refusal keeps the apiserver's message."""
    status = getattr(exc, "status", None)
    where = f" in namespace {namespace}" if namespace else ""
    found = _FORBIDDEN.search(_message(exc)) if status == 403 else None
    if found:
        verb, what = found.group("verb"), found.group("resource")
        group = f" (API group '{found.group('group')}')" if found.group("group") else ""
        return PhaseError(
            f"forbidden: the credentials in use may not {verb} {what}{where}. Grant the verb "
            f"'{verb}' on '{what}'{group}; {_role_for(what, namespace)}")
    if status == 403 and _status_message(exc) is None:
        # No Status from the apiserver (a proxy, or an empty body): say so, and what it may be.
        return PhaseError(f"could not {verb} {what}{where}: HTTP 403 forbidden, with no reason from the "
                          f"apiserver; if the credentials lack it, grant the verb '{verb}' on '{what}'")
    if status == 401:
        return PhaseError("unauthorized: the cluster refused the credentials; check kubeconfig, "
                          "api_key or the K8S_AUTH_* variables")
    return PhaseError(f"could not {verb} {what}{where}: HTTP {status}: {_message(exc)}")


def _role_for(what: str, namespace: Optional[str]) -> str:
    """Which of the crds role's ClusterRoles holds the rule (docs/rbac.md)."""
    cluster_wide = not namespace and what.split("/")[0] in ("servicelifecycles", "phases")
    if what.startswith("updatestatuses") or cluster_wide:
        return ("the ClusterRole lcm-openstack-update-status of the lcm.openstack.crds role has it, "
                "bound with a ClusterRoleBinding")
    return "the ClusterRole lcm-openstack-phase of the lcm.openstack.crds role has every rule the modules need"


def _message(exc: Any) -> str:
    """The apiserver's message out of a Status body, else the exception's text."""
    message = _status_message(exc)
    if message is not None:
        return message
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return str(body or exc)


def _status_message(exc: Any) -> Optional[str]:
    """The message of the apiserver's Status body, None when there is none."""
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return str(json.loads(body)["message"])
    except (TypeError, ValueError, KeyError):
        return None


def connection_error(exc: BaseException, server: str = "") -> Optional[PhaseError]:
    """One line for a failure to talk to the apiserver at all (None for
    anything else): what happened, where, and which option fixes it."""
    where = server or _server(exc) or "the apiserver"
    reason = transient.describe(_root(exc))
    if transient.certificate_problem(exc):
        return PhaseError(f"the certificate of {where} does not verify against the CA in use ({reason}). "
                          "Set ca_cert (K8S_AUTH_SSL_CA_CERT) or the kubeconfig's certificate-authority "
                          "to the cluster's CA")
    if not transient.is_transient(exc) or getattr(exc, "status", None):
        return None
    if re.search(r"refused|Name or service not known|No route|timed out|Temporary failure in name", reason):
        return PhaseError(f"cannot reach {where}: {reason}. Check host (K8S_AUTH_HOST) or the kubeconfig's "
                          "server, and that the apiserver is up")
    return PhaseError(f"the connection to {where} broke and did not come back: {reason}; run the task again "
                      "(a phase attaches to what it started)")


def _root(exc: BaseException) -> BaseException:
    """The innermost reason: urllib3 wraps the socket error in MaxRetryError.reason."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "reason", None)
        if isinstance(inner, BaseException):
            exc = inner
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    return exc


def _server(exc: BaseException) -> str:
    pool = getattr(exc, "pool", None)
    host = getattr(pool, "host", None)
    return f"the apiserver at {host}:{getattr(pool, 'port', '')}".rstrip(":") if host else ""
