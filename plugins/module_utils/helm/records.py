# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release's revisions as Helm's storage holds them: what `helm history`,
`helm get manifest` and `helm get values` print, from one list of the
release's storage records instead of three Helm processes.

Those three commands read nothing else: Helm lists the Secrets (or, with
HELM_DRIVER=configmap, the ConfigMaps) labelled owner=helm,name=<release> in
the namespace (helm/storage.py decodes one and says which kind), sorts them
by revision, prints the newest 256 as the history, and the newest one's
manifest and user-supplied values (`config`). The same list is read here,
and printed the same way, only where it is the record Helm reads: a dynamic
client, a Kubernetes storage driver (the SQL driver keeps its rows where only
Helm reaches; the memory driver is refused), and a release name Helm accepts
(Helm refuses the others with its own words). Anything else, and a client
that may not list the records, asks the Helm CLI as before. Like the Lease and the watcher, this takes the dynamic client to
reach the cluster Helm works on (the same connection options).
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm
from ansible_collections.lcm.openstack.plugins.module_utils.helm.history import History
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

MAX_HISTORY = 256  # `helm history --max 256`, as helm/cli.py asks it
# Helm's own check of a release name (chartutil.ValidateReleaseName).
_RELEASE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_MAX_NAME = 53
# The credentials listing Secrets may lack while Helm's have them: Helm's
# environment can name another identity (HELM_KUBETOKEN, HELM_KUBEASUSER).
_DENIED = (401, 403)


@dataclass
class Stored:
    history: History  # as `helm history --output json --max 256` prints it, oldest first
    manifest: str  # as `helm get manifest` prints it ('' without revisions)
    values: Dict[str, Any]  # as `helm get values --output json` prints it: the user-supplied values


def kind_of(helm: Helm) -> Optional[str]:
    """The kind Helm, run with its environment, keeps releases in (storage.kind)."""
    return storage.kind(dict(os.environ, **helm.env))


def read(dyn: Any, namespace: str, release: str, of: str = storage.SECRET) -> Optional[Stored]:
    """The release as Helm's storage holds it, in `of` (Secrets or
    ConfigMaps); None when the client may not list them."""
    stored = dyn.resources.get(api_version="v1", kind=of)
    try:
        listed = stored.get(namespace=namespace, label_selector=f"owner=helm,name={release}", serializer=plain)
    except DynamicApiError as exc:
        if getattr(exc, "status", None) in _DENIED:
            return None
        raise api_error(exc, "list", f"{of.lower()}s", namespace) from exc
    records = sorted(_decoded(listed.to_dict().get("items") or [], of), key=_revision)[-MAX_HISTORY:]
    last = records[-1] if records else {}
    return Stored(history=[entry(r) for r in records],
                  manifest=f"{last.get('manifest') or ''}\n" if records else "",
                  values=last.get("config") or {})


def entry(record: Dict[str, Any]) -> Dict[str, Any]:
    """One revision as `helm history --output json` prints it."""
    info = record.get("info") or {}
    metadata = (record.get("chart") or {}).get("metadata")
    known = isinstance(metadata, dict)  # Helm says MISSING for a record without its chart (helm/helm#1347)
    updated = str(info.get("last_deployed") or "")
    return {"revision": _revision(record),
            "updated": "" if updated.startswith("0001-01-01T00:00:00") else updated,  # Go's zero time
            "status": str(info.get("status") or ""),
            "chart": f"{metadata.get('name') or ''}-{metadata.get('version') or ''}" if known else "MISSING",
            "app_version": str(metadata.get("appVersion") or "") if known else "MISSING",
            "description": str(info.get("description") or "")}


def _decoded(items: List[Dict[str, Any]], of: str) -> List[Dict[str, Any]]:
    """Each item's record; one that does not decode is left out, as Helm leaves it out."""
    out = []
    for item in items:
        try:
            out.append(storage.decode((item.get("data") or {}).get("release") or "", of))
        except (ValueError, OSError, EOFError, zlib.error):  # base64, gzip or JSON that is not
            continue
    return [r for r in out if isinstance(r, dict)]


def _revision(record: Dict[str, Any]) -> int:
    return int(record.get("version") or 0)


class Revisions:
    """The release's history, and the last revision's manifest and values,
    read from storage where that is what Helm reads, else by the Helm CLI.
    The manifest and values are those of the history read last."""

    def __init__(self, helm: Helm, dyn: Any, name: str, namespace: str) -> None:
        self.helm, self.dyn, self.name, self.namespace = helm, dyn, name, namespace
        self.stored: Optional[Stored] = None

    def history(self) -> History:
        of = kind_of(self.helm)  # refuses a driver that keeps nothing, first
        self.stored = read(self.dyn, self.namespace, self.name, of) if of and self._from_storage() else None
        return self.stored.history if self.stored is not None else self.helm.history(self.name, self.namespace)

    def manifest(self) -> str:
        return self.stored.manifest if self.stored is not None else self.helm.get_manifest(self.name, self.namespace)

    def values(self) -> Dict[str, Any]:
        values = self.stored.values if self.stored is not None else self.helm.get_values(self.name, self.namespace)
        # The deployed credentials are masked too, wherever they would show.
        self.helm.redactor.add_values(values)
        return values

    def _from_storage(self) -> bool:
        return self.dyn is not None and len(self.name) <= _MAX_NAME \
            and bool(_RELEASE_NAME.match(self.name))
