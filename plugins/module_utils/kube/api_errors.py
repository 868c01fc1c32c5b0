# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failed Kubernetes API call said once, for every caller: what was asked
(the verb and the object), and what fixes it when the answer is about the
credentials (401, an authorization denial), a namespace that does not
exist or an apiserver that cannot be reached.

api_call() and answered() are the one place that catches the client's
exceptions (DynamicApiError, ApiException): a caller names what it does,
and what it handles itself (404: not there, 409: changed meanwhile), and
gets any other failure as a KubeError worded by api_error() (answered():
as the client raised it)."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Container, Dict, Iterator, List, Optional, Union

from ansible_collections.lcm.openstack.plugins.module_utils.common import compat, transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError

# The apiserver's words for an authorization denial (RBAC or another
# authorizer): ... is forbidden: User "alice" cannot create resource "jobs" in API group "batch" ...
# Admission refuses with 403 too ("pods "x" is forbidden: error looking up
# service account ..."): those are not about the credentials.
_FORBIDDEN = re.compile(r'is forbidden: User\b.*? cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]+)"'
                        r'(?: in API group "(?P<group>[^"]*)")?(?: in the namespace "(?P<namespace>[^"]*)")?')


def is_authorization_denial(exc: Any) -> bool:
    """A 403 because the credentials may not do it, not because admission refused the object."""
    return getattr(exc, "status", None) == 403 and _FORBIDDEN.search(_message(exc)) is not None


def api_error(exc: Any, verb: str, what: str, namespace: Optional[str] = None) -> KubeError:
    """A readable error for a failed API call (kubernetes ApiException or DynamicApiError).
    Only an authorization denial is turned into "the credentials may not ...";
    any other refusal keeps the apiserver's message."""
    status = getattr(exc, "status", None)
    where = f" in namespace {namespace}" if namespace else ""
    if status == 401:
        return unauthorized()
    found = _FORBIDDEN.search(_message(exc)) if status == 403 else None
    if found:
        return _forbidden(found, namespace, _message(exc))
    if status == 403 and _status_message(exc) is None:
        # No Status from the apiserver (a proxy, or an empty body): say so, and what it may be.
        return KubeError(f"could not {verb} {what}{where}: HTTP 403 forbidden, with no reason from the "
                         f"apiserver; if the credentials lack it, grant the verb '{verb}' on '{what}'")
    gone = missing_namespace(exc)
    if gone:
        return namespace_missing(gone)
    return KubeError(f"could not {verb} {what}{where}: HTTP {status}: {_message(exc)}")


def refusal(exc: BaseException) -> Optional[KubeError]:
    """One line for an API answer that reached a module's top uncaught (None
    for anything else): the call site is unknown, and need not be, since the
    apiserver's Status names the verb, resource, group and namespace of a
    denial. 401 (credentials not accepted), 403 (denied, or refused by
    admission) and a 404 saying the namespace does not exist. Never the HTTP
    headers, which the exception's own text carries."""
    status = getattr(exc, "status", None)
    if status == 401:
        return unauthorized()
    if status == 403:
        found = _FORBIDDEN.search(_message(exc))
        if found:
            return _forbidden(found, None, _message(exc))
        if _status_message(exc) is None:
            return KubeError("the apiserver refused a request: HTTP 403 forbidden, with no reason given "
                             "(a proxy in front of it may have answered)")
        return KubeError(f"the apiserver refused a request: HTTP 403: {_message(exc)}")
    gone = missing_namespace(exc)
    return namespace_missing(gone) if gone else None


# Where the module's connection came from (kube/credentials.py), described
# only when a 401 is worded: the adapter names it once it has the client.
_CONNECTION: List[Callable[[], str]] = []


def connection_named(describe: Optional[Callable[[], str]]) -> None:
    """Say where the connection came from in every 401 worded from now on (None: no more)."""
    _CONNECTION[:] = [describe] if describe is not None else []


def unauthorized(where: str = "") -> KubeError:
    """401: the apiserver did not take the credentials at all."""
    where = where or (_CONNECTION[0]() if _CONNECTION else "")
    if where:
        return KubeError(f"unauthorized: the apiserver at {where} did not accept the credentials (the token "
                         "expired or is wrong, or the client certificate is not trusted). Check them, or set "
                         "api_key (K8S_AUTH_API_KEY) or kubeconfig (K8S_AUTH_KUBECONFIG) to credentials it "
                         "accepts")
    return KubeError("unauthorized: the apiserver did not accept the credentials (the token expired or is "
                     "wrong, or its client certificate is not trusted). Set api_key (K8S_AUTH_API_KEY) to a "
                     "valid token, or kubeconfig (K8S_AUTH_KUBECONFIG) to a kubeconfig whose user it accepts")


def _forbidden(found: Any, namespace: Optional[str], message: str) -> KubeError:
    """An authorization denial: what to grant, which ClusterRole has it, and the apiserver's own words.
    The namespace is the apiserver's (a cluster-scope denial has none), else the caller's."""
    verb, what = found.group("verb"), found.group("resource")
    if found.group("namespace") is not None or "at the cluster scope" in message:
        namespace = found.group("namespace")
    where = f" in namespace {namespace}" if namespace else ""
    group = f" (API group '{found.group('group')}')" if found.group("group") else ""
    return KubeError(
        f"forbidden: the credentials in use may not {verb} {what}{where}. Grant the verb "
        f"'{verb}' on '{what}'{group}; {_role_for(what, namespace)} (docs/rbac.md). "
        f"The apiserver said: {message}")


def namespace_missing(namespace: str, helm: bool = False) -> KubeError:
    """The namespace a module was pointed at does not exist, and how to make it."""
    if helm:
        return KubeError(f"namespace {namespace} does not exist: set create_namespace: true on "
                         f"lcm.openstack.helm_release, or create it first (kubectl create namespace {namespace})")
    return KubeError(f"namespace {namespace} does not exist: create it first (kubectl create namespace "
                     f"{namespace}), or let the lcm.openstack.install role create it "
                     "(install_create_namespace: true, its default)")


def missing_namespace(exc: Any) -> str:
    """The namespace a 404 says does not exist ('' for any other answer):
    its Status names the namespace itself, not an object in it."""
    if getattr(exc, "status", None) != 404:
        return ""
    details = _status(exc).get("details") or {}
    return str(details.get("name") or "") if details.get("kind") == "namespaces" else ""


def path_gone(exc: Any) -> bool:
    """A 404 for the resource path itself, not for an object: the body is not
    a Status naming an object ('404 page not found', or a Status without
    details), as when a CRD was removed but a cached discovery still has it.
    No body at all says nothing either way (the apiserver always sends one)."""
    if getattr(exc, "status", None) != 404 or not getattr(exc, "body", None):
        return False
    return not (_status(exc).get("details") or {}).get("name")


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
    message = _status(exc).get("message")
    return None if message is None else str(message)


def _status(exc: Any) -> Dict[str, Any]:
    """The apiserver's Status body as a mapping ({} when the body is not one)."""
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        status = json.loads(body)
    except (TypeError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}


def connection_error(exc: BaseException, server: str = "") -> Optional[KubeError]:
    """One line for a failure to talk to the apiserver at all (None for
    anything else): what happened, where, and which option fixes it."""
    where = server or _server(exc) or "the apiserver"
    reason = transient.describe(_root(exc))
    if transient.certificate_problem(exc):
        return KubeError(f"the certificate of {where} does not verify against the CA in use ({reason}). "
                         "Set ca_cert (K8S_AUTH_SSL_CA_CERT) or the kubeconfig's certificate-authority "
                         "to the cluster's CA")
    if not transient.is_transient(exc) or getattr(exc, "status", None):
        return None
    if re.search(r"refused|Name or service not known|No route|timed out|Temporary failure in name", reason):
        return KubeError(f"cannot reach {where}: {reason}. Check host (K8S_AUTH_HOST) or the kubeconfig's "
                         "server, and that the apiserver is up")
    return KubeError(f"the connection to {where} broke and did not come back: {reason}; run the task again "
                     "(a phase attaches to what it started)")


def failure_reason(exc: BaseException) -> str:
    """A connection failure's own words, from its innermost reason, shortened."""
    return transient.describe(_root(exc))


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


def api_reason(exc: Any) -> str:
    """The apiserver's own words for a refusal: its causes (field: message), or its message."""
    try:
        body = json.loads(exc.body)
        causes = (body.get("details") or {}).get("causes") or []
        if causes:
            return "; ".join(_shortened(f"{c.get('field', '')}: {c.get('message', '')}".strip(": "))
                             for c in causes)
        return _shortened(body.get("message", str(exc)))
    except (TypeError, ValueError):
        return str(exc)


def _shortened(text: str, limit: int = 300) -> str:
    """Apiserver messages can quote a whole pod template; keep the point."""
    return text if len(text) <= limit else text[:limit] + " ..."


class Answer:
    """The client's exception for a call whose refusal its caller handles
    itself (None while no such answer came): what api_call() and answered()
    yield."""

    def __init__(self) -> None:
        self.error: Optional[Any] = None

    @property
    def status(self) -> Optional[int]:
        """The HTTP status of the answer kept (None: the call went through)."""
        return None if self.error is None else getattr(self.error, "status", None)

    def __bool__(self) -> bool:
        return self.error is not None


# What a caller handles itself: statuses (404, 409), client exception classes
# (NotFoundError), or a test on the exception.
Handled = Union[Container[Any], Callable[[Any], bool]]


def _handles(handled: Handled, exc: Any) -> bool:
    if callable(handled) and not isinstance(handled, type):
        return bool(handled(exc))
    status = getattr(exc, "status", None)
    return any(isinstance(exc, h) if isinstance(h, type) else status == h for h in handled)  # type: ignore[union-attr]


def _catching(caught: Any) -> Any:
    """The exception class an except clause takes: `caught`, else the dynamic
    client's. Called only when something was raised, so that kubernetes is
    imported only then (common/compat.py)."""
    return caught or compat.DynamicApiError


@contextlib.contextmanager
def answered(handled: Handled = lambda exc: True, caught: Any = None) -> Iterator[Answer]:
    """Around an API call whose refusal the caller handles itself: an answer
    `handled` picks is kept on the Answer yielded, and the block ends there;
    any other leaves as the client raised it. `caught` is the client's
    exception class to look at: DynamicApiError (the dynamic client's)
    unless given (ApiException, for a plain client's call or a watch)."""
    answer = Answer()
    try:
        yield answer
    except _catching(caught) as exc:
        if not _handles(handled, exc):
            raise
        answer.error = exc


@contextlib.contextmanager
def api_call(verb: str, what: str, namespace: Optional[str] = None, *,
             handled: Handled = (), caught: Any = None) -> Iterator[Answer]:
    """Around an API call: its refusal or failure leaves as api_error's
    KubeError, naming `verb`, `what` and `namespace`, with the client's
    exception as its cause. An answer `handled` picks (a status, a client
    exception class, or a test) is kept on the Answer yielded instead, for
    the caller to act on after the block."""
    answer = Answer()
    try:
        yield answer
    except _catching(caught) as exc:
        if not _handles(handled, exc):
            raise api_error(exc, verb, what, namespace) from exc
        answer.error = exc
