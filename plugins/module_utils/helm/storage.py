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


PENDING = ("pending-install", "pending-upgrade", "pending-rollback")


def encode(record: Dict[str, Any]) -> str:
    """`data.release` for a record: the inverse of decode (gzip, Helm's base64, the Secret's base64)."""
    inner = base64.b64encode(gzip.compress(json.dumps(record, separators=(",", ":")).encode()))
    return base64.b64encode(inner).decode()


def mark_failed(dyn: Any, namespace: str, release: str, revision: int, description: str) -> bool:
    """Record a pending revision as failed, as Helm itself does when an
    operation fails, so that Helm acts on the release again.

    Only for a revision whose operation is known to have ended: its Helm
    process exited, having lost its connection to the apiserver before it
    wrote the outcome (the run holds the release's Lease, so nothing else is
    working on it). The write carries the Secret's resourceVersion: if the
    record changed meanwhile, it is not overwritten. Returns False when the
    revision is not pending (or not stored as a Secret), and nothing changed."""
    secrets = dyn.resources.get(api_version="v1", kind="Secret")
    name = f"sh.helm.release.v1.{release}.v{revision}"
    try:
        secret = secrets.get(name=name, namespace=namespace).to_dict()
    except DynamicApiError as exc:
        if getattr(exc, "status", None) == 404:
            return False
        raise api_error(exc, "get", "secrets", namespace) from exc
    record = decode((secret.get("data") or {}).get("release", ""))
    info = record.setdefault("info", {})
    if info.get("status") not in PENDING:
        return False
    info["status"], info["description"] = "failed", description
    body = {"metadata": {"name": name, "resourceVersion": secret["metadata"]["resourceVersion"],
                         "labels": {"status": "failed"}},
            "data": {"release": encode(record)}}
    try:
        secrets.patch(body=body, namespace=namespace, content_type="application/merge-patch+json")
    except DynamicApiError as exc:
        raise api_error(exc, "patch", "secrets", namespace) from exc
    return True
