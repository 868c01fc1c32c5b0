# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The third-party libraries the engine uses, imported in one place.

When one is missing, the names still exist (as None, or as an exception class
nothing raises) so that importing module_utils never fails: the modules'
AnsibleK8SModule reports the missing library, with its install hint, before
any of this code runs.

The kubernetes names are loaded the first time one is asked for (PEP 562).
Importing the `kubernetes` package loads the whole client, its kubeconfig
loader with requests, oauthlib and pydantic: about 0.2 s of a module's start.
A call that never reaches the cluster through the client (helm_release
finding a release already as asked: Helm alone reads and renders it) must
not pay it. Such code refers to `compat.DynamicApiError` where it is used;
code that talks to the cluster anyway may import the name itself.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

try:
    import yaml
except ImportError:  # pragma: no cover - exercised by ansible-test's import test
    yaml = None

KUBERNETES_NAMES = ("watch", "ApiException", "ConflictError", "DynamicApiError", "NotFoundError",
                    "ResourceNotFoundError", "IMPORT_ERROR")
_loaded: Dict[str, Any] = {}


def _load() -> Dict[str, Any]:
    """The kubernetes names, imported once; stand-ins when the library is missing."""
    if _loaded:
        return _loaded
    error: Optional[ImportError] = None if yaml is not None else ImportError("No module named 'yaml'")
    try:
        from kubernetes import watch  # pylint: disable=import-outside-toplevel
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel
        from kubernetes.dynamic.exceptions import (  # pylint: disable=import-outside-toplevel
            ConflictError, DynamicApiError, NotFoundError, ResourceNotFoundError,
        )
    except ImportError as exc:  # pragma: no cover - exercised by ansible-test's import test
        error = exc
        watch = None
        ApiException, DynamicApiError, NotFoundError, ConflictError, ResourceNotFoundError = _stand_ins()
    _loaded.update(watch=watch, ApiException=ApiException, ConflictError=ConflictError,
                   DynamicApiError=DynamicApiError, NotFoundError=NotFoundError,
                   ResourceNotFoundError=ResourceNotFoundError, IMPORT_ERROR=error)
    return _loaded


def _stand_ins() -> tuple:  # pragma: no cover - exercised by ansible-test's import test
    """The kubernetes exceptions' stand-ins, with the library's hierarchy."""
    class ApiException(Exception):
        """kubernetes.client.rest.ApiException (library missing)."""

    class DynamicApiError(ApiException):
        """kubernetes.dynamic.exceptions.DynamicApiError (library missing)."""

    class NotFoundError(DynamicApiError):
        """kubernetes.dynamic.exceptions.NotFoundError (library missing)."""

    class ConflictError(DynamicApiError):
        """kubernetes.dynamic.exceptions.ConflictError (library missing)."""

    class ResourceNotFoundError(Exception):
        """kubernetes.dynamic.exceptions.ResourceNotFoundError (library missing)."""

    return ApiException, DynamicApiError, NotFoundError, ConflictError, ResourceNotFoundError


def __getattr__(name: str) -> Any:
    if name not in KUBERNETES_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _load()[name]
    globals()[name] = value  # asked once: the module attribute from then on
    return value


def core_v1_api() -> Any:
    """kubernetes.client's CoreV1Api, imported when first asked for: it loads
    252 model modules (most of a module's start-up CPU) and is needed only to
    read a failed container's log."""
    from kubernetes.client.api.core_v1_api import CoreV1Api  # pylint: disable=import-outside-toplevel
    return CoreV1Api


# The names module __getattr__ gives are not listed: a star import would load kubernetes.
__all__ = ["yaml", "core_v1_api", "KUBERNETES_NAMES"]
