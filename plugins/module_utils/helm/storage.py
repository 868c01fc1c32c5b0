# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a Helm release's deployed revision straight from its storage record.

The phase engine runs with the Kubernetes client's credentials (kubeconfig or
the K8S_AUTH_* variables AWX injects). Asking the Helm CLI instead would need
those credentials translated into Helm's own flags; the storage record is the
same one Helm reads (`sh.helm.release.v1.<release>.v<revision>`, labelled
owner=helm, name=<release>, status=<status>, version=<revision>), and Helm 3
and Helm 4 share its format: base64 of gzip of the release as JSON.

Where the record lives is Helm's storage driver, HELM_DRIVER in the
environment Helm runs in, with the names Helm 3 and 4 accept (case as is):

- unset, `secret`, `secrets`: a Secret; its data is base64 again;
- `configmap`, `configmaps`: a ConfigMap of the same name and labels, the
  record as Helm encoded it;
- `sql`: rows in a database only Helm has the connection string of: read
  through the Helm CLI (`helm history`, `helm get`), never rewritten here;
- `memory`: records that live as long as one Helm process, so every run
  would install anew: refused, as is a name Helm does not know.
"""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call

_GZIP_MAGIC = b"\x1f\x8b"
SECRET, CONFIGMAP = "Secret", "ConfigMap"
# HELM_DRIVER as Helm reads it, and the kind its records are in here.
KINDS = {"": SECRET, "secret": SECRET, "secrets": SECRET, "configmap": CONFIGMAP, "configmaps": CONFIGMAP}
THROUGH_HELM = ("sql",)  # kept where only Helm reaches: its CLI reads them


def kind(env: Mapping[str, str]) -> Optional[str]:
    """The kind Helm, run with `env`, keeps its release records in; None
    when only the Helm CLI reaches them. A driver that keeps nothing between
    two Helm processes, or one Helm does not know, is refused."""
    driver = env.get("HELM_DRIVER", "")
    if driver in KINDS:
        return KINDS[driver]
    if driver in THROUGH_HELM:
        return None
    if driver == "memory":
        raise InputError("HELM_DRIVER=memory keeps a release only as long as one Helm process runs: each run "
                         "would install it again; unset HELM_DRIVER, or set it to secret, configmap or sql")
    raise InputError(f"HELM_DRIVER={driver!r} is not a storage driver Helm knows; unset it, or set it to "
                     "secret, configmap or sql")


@dataclass
class Deployed:
    revision: int
    chart_version: str = ""
    app_version: str = ""
    values: Dict[str, Any] = field(default_factory=dict)  # the user-supplied values only
    apply_method: str = ""  # Helm 4's: ssa (server-side apply) or csa; '' from Helm 3
    # Read only when asked for (the traffic target is chosen from them):
    manifest: str = ""  # as `helm get manifest` prints it
    defaults: Dict[str, Any] = field(default_factory=dict)  # the chart's values, under `values`


def decode(data: str, of: str = SECRET) -> Dict[str, Any]:
    """The release record inside a storage Secret's (or ConfigMap's) `data.release`."""
    raw = base64.b64decode(base64.b64decode(data) if of == SECRET else data)
    if raw[:2] == _GZIP_MAGIC:
        raw = gzip.decompress(raw)
    return json.loads(raw)


def deployed(dyn: Any, namespace: str, release: str, of: str = SECRET,
             with_manifest: bool = False) -> Optional[Deployed]:
    """The release's deployed revision, or None when nothing is deployed;
    `of` is the kind Helm keeps it in (kind()). `with_manifest`: its manifest
    and the chart's values too, which the record holds beside the rest."""
    stored = dyn.resources.get(api_version="v1", kind=of)
    selector = f"owner=helm,name={release},status=deployed"
    with api_call("list", f"{of.lower()}s", namespace):
        items = stored.get(namespace=namespace, label_selector=selector).to_dict().get("items") or []
    if not items:
        return None
    latest = max(items, key=lambda s: int((s["metadata"].get("labels") or {}).get("version", "0")))
    record = decode((latest.get("data") or {}).get("release", ""), of)
    metadata = (record.get("chart") or {}).get("metadata") or {}
    out = Deployed(revision=int(record.get("version") or 0),
                   chart_version=str(metadata.get("version") or ""),
                   app_version=str(metadata.get("appVersion") or ""),
                   values=record.get("config") or {}, apply_method=str(record.get("apply_method") or ""))
    if with_manifest:
        out.manifest = record.get("manifest") or ""
        out.defaults = (record.get("chart") or {}).get("values") or {}
    return out


def deployed_by_helm(helm: Any, namespace: str, release: str, with_manifest: bool = False) -> Optional[Deployed]:
    """As deployed(), asked of the Helm CLI (`helm history`, `helm get
    values`): for a driver whose records only Helm reaches. `with_manifest`
    reads `helm get manifest` and `helm get values --all` at once too (all
    the values, as `defaults`)."""
    revisions = [int(h.get("revision") or 0) for h in helm.history(release, namespace) if h.get("status") == "deployed"]
    if not revisions:
        return None
    revision = revisions[-1]
    if not with_manifest:
        return Deployed(revision=revision, values=helm.get_values(release, namespace, revision))
    reads = [["get", what, release, "--namespace", namespace, "--revision", str(revision), *extra]
             for what, extra in (("values", ["--output", "json"]), ("values", ["--output", "json", "--all"]),
                                 ("manifest", []))]
    given, every, manifest = helm.run_together(reads)
    for result in (given, every, manifest):
        if result.rc != 0:
            raise helm.error(result)
    return Deployed(revision=revision, values=json.loads(given.stdout or "null") or {},
                    manifest=manifest.stdout, defaults=json.loads(every.stdout or "null") or {})


PENDING = ("pending-install", "pending-upgrade", "pending-rollback")


def encode(record: Dict[str, Any], of: str = SECRET) -> str:
    """`data.release` for a record: the inverse of decode (gzip, Helm's base64, a Secret's base64)."""
    inner = base64.b64encode(gzip.compress(json.dumps(record, separators=(",", ":")).encode()))
    return (base64.b64encode(inner) if of == SECRET else inner).decode()


def mark_failed(dyn: Any, namespace: str, release: str, revision: int, description: str,
                of: Optional[str] = SECRET) -> bool:
    """Record a pending revision as failed, as Helm itself does when an
    operation fails, so that Helm acts on the release again.

    Only for a revision whose operation is known to have ended: its Helm
    process exited, having lost its connection to the apiserver before it
    wrote the outcome (the run holds the release's Lease, so nothing else is
    working on it). The write carries the Secret's resourceVersion: if the
    record changed meanwhile, it is not overwritten. `of` is the kind Helm
    keeps the record in (kind()); None, a driver only Helm reaches, writes
    nothing. Returns False when the revision is not pending (or not stored as
    `of`), and nothing changed."""
    if of is None:
        return False
    stored = dyn.resources.get(api_version="v1", kind=of)
    name = f"sh.helm.release.v1.{release}.v{revision}"
    plural = f"{of.lower()}s"
    with api_call("get", plural, namespace, handled=(404,)) as gone:
        current = stored.get(name=name, namespace=namespace).to_dict()
    if gone:
        return False
    record = decode((current.get("data") or {}).get("release", ""), of)
    info = record.setdefault("info", {})
    if info.get("status") not in PENDING:
        return False
    info["status"], info["description"] = "failed", description
    body = {"metadata": {"name": name, "resourceVersion": current["metadata"]["resourceVersion"],
                         "labels": {"status": "failed"}},
            "data": {"release": encode(record, of)}}
    with api_call("patch", plural, namespace):
        stored.patch(body=body, namespace=namespace, content_type="application/merge-patch+json")
    return True
