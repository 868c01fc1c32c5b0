# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The third-party libraries the engine uses, imported in one place.

When one is missing, the names still exist (as None, or as an exception class
nothing raises) so that importing module_utils never fails: the modules'
AnsibleK8SModule reports the missing library, with its install hint, before
any of this code runs.
"""

from __future__ import annotations

from typing import Any

try:
    import yaml
    from kubernetes import watch
    from kubernetes.client.rest import ApiException
    from kubernetes.dynamic.exceptions import (
        ConflictError, DynamicApiError, NotFoundError, ResourceNotFoundError,
    )
    IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised by ansible-test's import test
    IMPORT_ERROR = exc
    yaml = watch = None

    # Stand-ins for the kubernetes exceptions, with the library's hierarchy.
    class ApiException(Exception):  # type: ignore[no-redef]
        """kubernetes.client.rest.ApiException (library missing)."""

    class DynamicApiError(ApiException):  # type: ignore[no-redef]
        """kubernetes.dynamic.exceptions.DynamicApiError (library missing)."""

    class NotFoundError(DynamicApiError):  # type: ignore[no-redef]
        """kubernetes.dynamic.exceptions.NotFoundError (library missing)."""

    class ConflictError(DynamicApiError):  # type: ignore[no-redef]
        """kubernetes.dynamic.exceptions.ConflictError (library missing)."""

    class ResourceNotFoundError(Exception):  # type: ignore[no-redef]
        """kubernetes.dynamic.exceptions.ResourceNotFoundError (library missing)."""


def core_v1_api() -> Any:
    """kubernetes.client's CoreV1Api, imported when first asked for: it loads
    252 model modules (most of a module's start-up CPU) and is needed only to
    read a failed container's log."""
    from kubernetes.client.api.core_v1_api import CoreV1Api  # pylint: disable=import-outside-toplevel
    return CoreV1Api


__all__ = ["yaml", "watch", "core_v1_api", "ApiException", "ConflictError", "DynamicApiError",
           "NotFoundError", "ResourceNotFoundError", "IMPORT_ERROR"]
