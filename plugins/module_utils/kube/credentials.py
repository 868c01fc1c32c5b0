# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a module's connection to the cluster comes from, and the one line
that says so when the apiserver cannot be reached, its certificate does not
verify, or it does not accept the credentials.

kubernetes.core (k8s/client.py) picks the connection in this order, each
option from the module's parameters, else from K8S_AUTH_<OPTION>: host with
a token, a user and password or a client certificate; else a kubeconfig (the
one given, else KUBECONFIG, else ~/.kube/config) at the context given or its
current context, with host overriding its server; else, with neither a
kubeconfig nor a context given, the pod's service account when running in a
cluster. The same order is followed here, only to name it: a wrong server in
an AWX credential and a stale kubeconfig on the controller look alike from
the error alone.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import unauthorized

IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"  # kubernetes.config's
_UNREACHABLE = re.compile(r"refused|Name or service not known|No route|timed out|Temporary failure in name|"
                          r"nodename nor servname|No address associated", re.IGNORECASE)


@dataclass
class Source:
    server: str  # the apiserver's URL ('' when the source names none)
    origin: str  # where the server and the credentials were read
    check: str  # where the server is set, to check it

    def __str__(self) -> str:
        return f"{self.server} ({self.origin})" if self.server else f"named by {self.origin}"


def source(params: Mapping[str, Any], environ: Mapping[str, str], show_path: bool = True,
           in_cluster_token: str = IN_CLUSTER_TOKEN) -> Source:
    """The connection kubernetes.core makes from these parameters and this
    environment. `show_path` False keeps a kubeconfig option's path out (an
    option marked no_log)."""
    def given(name: str) -> Tuple[Any, str]:
        if params.get(name) is not None:
            return params[name], f"option {name}"
        env = f"K8S_AUTH_{name.upper()}"
        return (environ[env], env) if environ.get(env) else (None, "")

    host, host_from = given("host")
    for names, what in ((("api_key",), "token"), (("username", "password"), "user and password"),
                        (("client_cert", "client_key"), "client certificate")):
        found = [given(n) for n in names]
        if host and all(pair[0] for pair in found):
            return Source(str(host), f"host from {host_from}, {what} from {' and '.join(pair[1] for pair in found)}",
                          f"host ({host_from})")
    kubeconfig, kubeconfig_from = given("kubeconfig")
    context, context_from = given("context")
    if not kubeconfig and not context and environ.get("KUBERNETES_SERVICE_HOST") and \
            os.path.exists(in_cluster_token):
        server = f"https://{environ['KUBERNETES_SERVICE_HOST']}:{environ.get('KUBERNETES_SERVICE_PORT', '443')}"
        if host:
            return Source(str(host), f"host from {host_from}, the pod's service account", f"host ({host_from})")
        return Source(server, "the pod's service account, KUBERNETES_SERVICE_HOST",
                      "the kubernetes Service of the cluster and the pod's network")
    if isinstance(kubeconfig, dict):
        config, named = kubeconfig, f"the kubeconfig mapping in {kubeconfig_from}"
    else:
        path = str(kubeconfig) if kubeconfig else environ.get("KUBECONFIG") or "~/.kube/config"
        origin = kubeconfig_from or ("KUBECONFIG" if environ.get("KUBECONFIG") else "the default")
        named = f"kubeconfig {path} ({origin})" if show_path or not kubeconfig else f"the kubeconfig in {origin}"
        config = _read(path)
    current = str(context or config.get("current-context") or "")
    cluster, server = _cluster(config, current)
    at = (f"{named}, context {current}" + (f" from {context_from}" if context else "")) if current else named
    if host:
        return Source(str(host), f"host from {host_from}, credentials from {at}", f"host ({host_from})")
    return Source(server, at, f"the server of cluster {cluster} in that kubeconfig" if cluster else
                  "the kubeconfig's server")


def _read(paths: str) -> Dict[str, Any]:
    """The kubeconfig files (KUBECONFIG may list several), merged first one first; {} when unreadable."""
    merged: Dict[str, Any] = {}
    for path in paths.split(os.pathsep):
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as handle:
                loaded = yaml.safe_load(handle) or {}
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if not isinstance(loaded, dict):
            continue
        merged.setdefault("current-context", loaded.get("current-context"))
        for key in ("contexts", "clusters"):
            merged[key] = (merged.get(key) or []) + list(loaded.get(key) or [])
    return merged


def _cluster(config: Mapping[str, Any], context: str) -> Tuple[str, str]:
    """The cluster a context names, and that cluster's server ('' for what is not there)."""
    def named(key: str, name: str) -> Dict[str, Any]:
        entries = [e for e in config.get(key) or [] if isinstance(e, dict) and e.get("name") == name]
        return entries[0] if entries else {}
    cluster = str((named("contexts", context).get("context") or {}).get("cluster") or "")
    return cluster, str((named("clusters", cluster).get("cluster") or {}).get("server") or "")


def contact_error(exc: BaseException, src: Source, reason: str) -> Optional[KubeError]:
    """One line for an apiserver that cannot be reached, whose certificate
    does not verify, or that did not accept the credentials: where the
    connection came from and what to check. None for anything else.
    `reason` is the failure's own words, shortened (api_errors.failure_reason).
    A source that names no server (a kubeconfig that cannot be read here)
    takes the host the client tried."""
    pool = getattr(exc, "pool", None)
    if not src.server and getattr(pool, "host", None):
        src = Source(f"{pool.host}:{pool.port}" if getattr(pool, "port", None) else str(pool.host), src.origin,
                     src.check)
    if transient.certificate_problem(exc):
        return KubeError(f"the certificate of the apiserver at {src} does not verify against the CA in use "
                         f"({reason}). Set ca_cert (K8S_AUTH_SSL_CA_CERT) or the kubeconfig's "
                         "certificate-authority to the cluster's CA")
    if getattr(exc, "status", None) == 401:
        return unauthorized(str(src))
    if transient.is_transient(exc) and not getattr(exc, "status", None) and _UNREACHABLE.search(reason):
        return KubeError(f"cannot reach the apiserver at {src}: {reason}. Check {src.check}, the network to "
                         "it, and that the apiserver is up")
    return None
