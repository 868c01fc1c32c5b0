# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a Helm release's deployed revision straight from its storage Secret.

The phase engine runs with the Kubernetes client's credentials (kubeconfig or
the K8S_AUTH_* variables AWX injects). Asking the Helm CLI instead would need
those credentials translated into Helm's own flags; the storage Secret is the
same record Helm reads (`sh.helm.release.v1.<release>.v<revision>`, labelled
owner=helm, name=<release>, status=<status>), and Helm 3 and Helm 4 share its
format: base64 of gzip of the release as JSON, inside the Secret's base64.
"""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class Deployed:
    revision: int
    chart_version: str = ""
    app_version: str = ""
    values: Dict[str, Any] = field(default_factory=dict)  # the user-supplied values only


def decode(data: str) -> Dict[str, Any]:
    """The release record inside a storage Secret's `data.release`."""
    raw = base64.b64decode(base64.b64decode(data))
    if raw[:2] == _GZIP_MAGIC:
        raw = gzip.decompress(raw)
    return json.loads(raw)


def deployed(dyn: Any, namespace: str, release: str) -> Optional[Deployed]:
    """The release's deployed revision, or None when nothing is deployed."""
    secrets = dyn.resources.get(api_version="v1", kind="Secret")
    selector = f"owner=helm,name={release},status=deployed"
    try:
        items = secrets.get(namespace=namespace, label_selector=selector).to_dict().get("items") or []
    except DynamicApiError as exc:
        raise api_error(exc, "list", "secrets", namespace) from exc
    if not items:
        return None
    latest = max(items, key=lambda s: int((s["metadata"].get("labels") or {}).get("version", "0")))
    record = decode((latest.get("data") or {}).get("release", ""))
    metadata = (record.get("chart") or {}).get("metadata") or {}
    return Deployed(revision=int(record.get("version") or 0),
                    chart_version=str(metadata.get("version") or ""),
                    app_version=str(metadata.get("appVersion") or ""),
                    values=record.get("config") or {})
