# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules' connection to the cluster, and how failing to make it is said.

The client comes from kubernetes.core (the same options, K8S_AUTH_* as AWX
injects them). What this adds: a kubeconfig option naming no file, an
apiserver that cannot be reached, a certificate that does not verify,
credentials it does not accept (401), a request it denies (403) and a
namespace that does not exist each end the task with one line naming what
fixes it, not a traceback (api_errors.connection_error, api_errors.refusal).
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any, Callable, Iterator

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.process_end import freeze_heap_at_exit
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import (
    connection_error, connection_named, failure_reason, refusal,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.retrying import (
    FIRST_CONTACT_SECONDS, first_contact_timeout, retrying,
)


def reported(run: Callable[[Any], None]) -> Callable[[Any], None]:
    """A module's run whose failure to talk to the apiserver ends the task
    with one line naming what fixes it, not a traceback with the HTTP
    headers: refused, unreachable, a certificate that does not verify, a
    connection that broke for good (api_errors.connection_error); and an API
    answer that nothing below caught (api_errors.refusal): credentials not
    accepted (401), a request denied (403), a namespace that does not exist.
    Anything else is raised as it is.

    Why here, and not an api_error around every call: a 401 or a 403 says
    nothing about the object at hand, so no caller has anything to add or
    to recover, and the apiserver's Status already names the verb, resource,
    API group and namespace it denied. One place then covers every API call
    of every module, discovery, kubernetes.core's and those still to be
    written, with the same line api_error gives where a caller does catch
    (it also words other statuses with what the caller was doing)."""
    @functools.wraps(run)
    def wrapper(module: Any) -> None:
        # Every module's run passes here: its process's end is readied too.
        freeze_heap_at_exit()
        try:
            run(module)
        except Exception as exc:  # noqa: BLE001 - sorted by connection_error and refusal, re-raised otherwise
            if isinstance(exc, FileNotFoundError) and _missing_kubeconfig(module):
                module.fail_json(msg=_missing_kubeconfig(module))
            err = _contact_error(module, exc) or connection_error(exc, module.params.get("host") or "") \
                or refusal(exc)
            if err is None:
                raise
            module.fail_json(msg=str(err))
    return wrapper


def _contact_error(module: Any, exc: BaseException) -> Any:
    """The apiserver unreachable, its certificate unverified, or the
    credentials refused: said with where the connection came from."""
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import credentials  # pylint: disable=import-outside-toplevel
    return credentials.contact_error(exc, _source(module), failure_reason(exc))


def _source(module: Any) -> Any:
    """Where the module's connection comes from (kube/credentials.py); loaded
    only on a failure, as a module loads only what its call uses."""
    from ansible_collections.lcm.openstack.plugins.module_utils.kube import credentials  # pylint: disable=import-outside-toplevel
    # kubernetes.core's Helm options mark kubeconfig no_log: its path stays out.
    hidden = bool((getattr(module, "argument_spec", None) or {}).get("kubeconfig", {}).get("no_log"))
    return credentials.source(module.params, os.environ, show_path=not hidden)


def _named(module: Any) -> None:
    """A 401 worded anywhere in the run names the connection (read only then)."""
    connection_named(lambda: str(_source(module)))


def _missing_kubeconfig(module: Any) -> str:
    """The error for a kubeconfig option naming no file ('' when it names one)."""
    kubeconfig = module.params.get("kubeconfig") or os.environ.get("K8S_AUTH_KUBECONFIG")
    # Empty is not given (AWX's token credential sets K8S_AUTH_KUBECONFIG to nothing).
    if not kubeconfig or not isinstance(kubeconfig, str) or os.path.exists(os.path.expanduser(kubeconfig)):
        return ""
    # The path itself stays out: kubernetes.core's Helm options mark kubeconfig no_log.
    return ("the kubeconfig file given (kubeconfig or K8S_AUTH_KUBECONFIG) does not exist: point it at a "
            "kubeconfig file, or set host and api_key (K8S_AUTH_HOST, K8S_AUTH_API_KEY)")


def get_api_client(**options: Any) -> Any:
    """kubernetes.core's get_api_client, imported when a client is made: its
    module loads the kubernetes package (common/compat.py says what that
    costs), which a helm_release that finds nothing to change never needs."""
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as core  # pylint: disable=import-outside-toplevel
    return core.get_api_client(**options)


def client(module: Any) -> Any:
    if _missing_kubeconfig(module):
        module.fail_json(msg=_missing_kubeconfig(module))
    _named(module)
    try:
        return retrying(_connected(lambda: get_api_client(module=module)).client)
    except CoreException as exc:
        module.fail_json(msg=f"{exc}. Set kubeconfig (or K8S_AUTH_KUBECONFIG), or host and "
                             "api_key (K8S_AUTH_HOST, K8S_AUTH_API_KEY)")
    return None


def helm_kube_client(module: Any) -> Any:
    """A dynamic client from the same connection options, for the watcher."""
    p = module.params
    auth = {k: p.get(k) for k in ("kubeconfig", "context", "host", "api_key", "validate_certs", "ca_cert")}
    _named(module)
    try:
        given = {k: v for k, v in auth.items() if v is not None}
        return retrying(_connected(lambda: get_api_client(module=None, **given)).client)
    except CoreException as exc:
        module.fail_json(msg=f"{exc}. Set kubeconfig (or K8S_AUTH_KUBECONFIG), or host and api_key")
    return None


def _connected(connect: Callable[[], Any]) -> Any:
    """kubernetes.core's client, made again through a transient failure.

    Its dynamic client reads the server's version and API groups while it is
    constructed (unless its discovery cache has them), before retrying() can
    wrap the ApiClient's requests. That is the first contact with the
    apiserver: each request connects with retrying's short timeout, and the
    whole is tried for FIRST_CONTACT_SECONDS, so a server that is not there
    fails the task in seconds. Nothing is cached by a construction that
    failed, and the reads are idempotent."""
    with _first_contact():
        return transient.retry(connect, budget=FIRST_CONTACT_SECONDS)


@contextlib.contextmanager
def _first_contact() -> Iterator[None]:
    """While kubernetes.core constructs its client, every ApiClient request
    connects with the first contact's timeout; a client that got an answer
    is marked so that retrying() gives its later requests the long retries.
    The class is patched, not an instance: the instance is made inside
    kubernetes.core's get_api_client, and its construction is the contact.
    Restored when the construction ends; a module constructs its clients one
    at a time, on its one thread."""
    # Imported here: the module loads without the library (ansible-test's
    # import test), and says it is missing when a client is made.
    from kubernetes.client import ApiClient  # pylint: disable=import-outside-toplevel

    api_class = ApiClient
    original = api_class.call_api

    def call_api(self: Any, *args: Any, **kwargs: Any) -> Any:
        response = original(self, *args, **first_contact_timeout(kwargs))
        self._lcm_contacted = True  # pylint: disable=protected-access
        return response
    api_class.call_api = call_api
    try:
        yield
    finally:
        api_class.call_api = original
