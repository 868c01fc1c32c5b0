# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's CRDs as the cluster serves them, and saying when it does not.

The modules find a resource through API discovery, which kubernetes.core's
dynamic client caches in a file that outlives the process (and is shared by
every module run as the same user against the same apiserver). After the
lcm CRDs are removed, that file still lists them: the lookup succeeds and
the first request answers `404 page not found`, which a caller would take
for "no such object". A CrdResource sees such a 404 (the resource path is
gone: no Status naming an object), refreshes the discovery cache and looks
the resource up once more. Gone: the task ends saying the CRD is not
installed and which role installs it. Found again (the CRD came back, under
another version): the request runs once more against it.
"""

from __future__ import annotations

from typing import Any, Callable

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError, ResourceNotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing, KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import path_gone
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import API_VERSION, GROUP

PLURALS = {"Phase": "phases", "ServiceLifecycle": "servicelifecycles", "UpdateStatus": "updatestatuses"}
_PLAIN = (str, bytes, int, float, bool, list, tuple, dict, type(None))


def crd_missing(kind: str) -> CrdMissing:
    """The one error for a CRD of the collection that the cluster does not serve."""
    return CrdMissing(f"the {kind} CRD ({PLURALS[kind]}.{GROUP}) is not installed: "
                      "run the lcm.openstack.crds role first", kind)


def lcm_resource(dyn: Any, kind: str) -> "CrdResource":
    """The resource of one of the collection's kinds (Phase, ServiceLifecycle, UpdateStatus)."""
    return CrdResource(dyn, API_VERSION, kind, lambda: crd_missing(kind))


class CrdResource:
    """A dynamic client resource of a CRD, used like the resource itself
    (res.get, res.create, res.status.patch, dyn.watch(res, ...)), whose
    discovery may be stale (see the module docstring)."""

    def __init__(self, dyn: Any, api_version: str, kind: str, missing: Callable[[], KubeError]) -> None:
        self._dyn, self._api_version, self._kind, self._missing = dyn, api_version, kind, missing
        self.resource = self._lookup()

    def _lookup(self) -> Any:
        try:
            return self._dyn.resources.get(api_version=self._api_version, kind=self._kind)
        except ResourceNotFoundError as exc:
            raise self._missing() from exc

    def call(self, method: Callable[[Any], Callable[..., Any]], *args: Any, **kwargs: Any) -> Any:
        """`method(resource)(*args, **kwargs)`, looking the resource up again
        once if its path is gone. The failed request changed nothing, so it
        may be sent again."""
        try:
            return method(self.resource)(*args, **kwargs)
        except NotFoundError as exc:
            if not path_gone(exc):
                raise
            self._dyn.resources.invalidate_cache()
            try:
                self.resource = self._dyn.resources.get(api_version=self._api_version, kind=self._kind)
            except ResourceNotFoundError:
                raise self._missing() from exc
        return method(self.resource)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "resource":
            raise AttributeError(name)
        value = getattr(self.resource, name)
        if isinstance(value, _PLAIN):  # kind, name, namespaced, group_version ...
            return value
        if callable(value):  # get, create, replace, patch, delete, server_side_apply ...
            return _method(self, lambda res: getattr(res, name))
        return _Subresource(self, name)  # status


class _Subresource:
    """res.status of a CrdResource: its calls go through the parent's call."""

    def __init__(self, parent: CrdResource, name: str) -> None:
        self._parent, self._name = parent, name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(getattr(self._parent.resource, self._name), attr)
        if isinstance(value, _PLAIN) or not callable(value):
            return value
        return _method(self._parent, lambda res: getattr(getattr(res, self._name), attr))


def _method(parent: CrdResource, method: Callable[[Any], Callable[..., Any]]) -> Callable[..., Any]:
    # Neither annotated nor documented: the kubernetes watch reads the
    # type of what it streams from those, and a resource's own method has none.
    def bound(*args, **kwargs):  # type: ignore[no-untyped-def]
        return parent.call(method, *args, **kwargs)
    return bound
