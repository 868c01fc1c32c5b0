# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn a chart, or plain manifests, into the list of objects a phase may own.

`helm template` renders the chart client-side; every object keeps the chart
path of the template it came from (Helm's `# Source:` comment), which is what
selection by template name matches on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor, mask_secret

_SOURCE = re.compile(r"^# Source: (?P<path>\S+)", re.MULTILINE)
_DOC_SPLIT = re.compile(r"^---\s*$", re.MULTILINE)


@dataclass
class Rendered:
    """One rendered object and the template it came from."""

    obj: Dict[str, Any]
    source: str = ""  # path inside the chart, e.g. templates/job-db-sync.yaml
    wave: tuple = field(default=(0,))

    @property
    def kind(self) -> str:
        return self.obj.get("kind", "")

    @property
    def name(self) -> str:
        return (self.obj.get("metadata") or {}).get("name", "")

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}"


def helm_template(
    helm: str,
    release: str,
    chart: str,
    namespace: str,
    values: Optional[Mapping[str, Any]] = None,
    values_files: Sequence[str] = (),
    chart_version: Optional[str] = None,
    extra_values: Optional[Mapping[str, Any]] = None,
    redactor: Optional[Redactor] = None,
    timeout: float = 120,
) -> str:
    """Run `helm template` and return its manifest text; extra_values win over values."""
    if not chart:
        raise InputError("source.chart is empty; give a chart path, repo/chart or oci:// reference")
    if values is not None and not isinstance(values, Mapping):
        raise InputError(f"source.values must be a mapping, not {type(values).__name__}")
    for path in values_files:
        if not os.path.isfile(path):
            raise InputError(f"values file {path} does not exist (source.values_files)")
    cli = Helm(helm, redactor=redactor or Redactor(), timeout=timeout)
    merged = merge_values(values or {}, extra_values or {})
    try:
        with cli.values_args(merged, values_files) as value_args:
            return cli.template(release, chart, namespace, chart_version, value_args)
    except HelmError as exc:
        raise HelmError(_explain_helm_error(chart, exc.details.get("stderr", str(exc)).strip())) from exc


def _explain_helm_error(chart: str, stderr: str) -> str:
    stderr = stderr.removeprefix("Error: ")
    hint = ""
    if "not found" in stderr and ("path" in stderr or "chart" in stderr):
        hint = (" Check source.chart: a local chart directory or .tgz, repo/chart after "
                "`helm repo add`, or an oci:// reference.")
    elif "template:" in stderr or "parse error" in stderr:
        hint = " The chart's template failed at the file and line shown above."
    elif "values don't meet the specifications of the schema" in stderr:
        hint = " Fix the values named above to match the chart's values.schema.json."
    return f"helm template {chart} failed: {stderr}.{hint}"


def parse_manifest(text: str) -> List[Rendered]:
    """Split a multi-document manifest into objects, keeping each one's template."""
    out: List[Rendered] = []
    for doc in _DOC_SPLIT.split(text):
        if not doc.strip():
            continue
        match = _SOURCE.search(doc)
        source = _chart_relative(match.group("path")) if match else ""
        try:
            data = yaml.safe_load(doc)
        except yaml.YAMLError as exc:
            raise HelmError(f"rendered manifest of {source or 'the chart'} is not valid YAML: {exc}") from exc
        out.extend(Rendered(obj=o, source=source) for o in _objects(data, source))
    return out


def _chart_relative(path: str) -> str:
    """keystone/templates/x.yaml -> templates/x.yaml (subcharts keep charts/...)."""
    return path.split("/", 1)[1] if "/" in path else path


def _objects(data: Any, where: str) -> List[Dict[str, Any]]:
    """The objects of one document: itself, or the items of a *List."""
    if data is None:
        return []
    if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data:
        return [obj for item in data["items"] or [] for obj in _objects(item, where)]
    if not isinstance(data, dict) or "kind" not in data or "apiVersion" not in data:
        raise InputError(f"{where or 'a manifest'} holds something that is not a Kubernetes object "
                         "(it needs apiVersion and kind)")
    return [data]


def load_manifests(items: Sequence[Any]) -> List[Rendered]:
    """Plain manifests: objects given inline, or paths of YAML files."""
    out: List[Rendered] = []
    for item in items:
        if isinstance(item, Mapping):
            out.extend(Rendered(obj=dict(o), source="") for o in _objects(dict(item), "an inline manifest"))
            continue
        if not isinstance(item, str) or not os.path.isfile(item):
            raise InputError(f"manifest {item!r} is neither an object nor an existing file (source.manifests)")
        with open(item, encoding="utf-8") as handle:
            text = handle.read()
        for rendered in parse_manifest(text):
            rendered.source = rendered.source or item
            out.append(rendered)
    return out


def masked_manifest(manifest: str) -> str:
    """A release's manifest for a diff or a report: its objects sorted, Secret data masked."""
    objects = [mask_secret(r.obj) for r in parse_manifest(manifest)] if manifest else []
    return yaml.safe_dump_all(sorted(objects, key=lambda o: (o.get("kind", ""), o.get("metadata", {}).get("name", ""))),
                              sort_keys=True) if objects else ""


def dotted_value(dotted: str, value: Any) -> Dict[str, Any]:
    """A values mapping that sets one dotted key: lifecycle.phase=install gives {lifecycle: {phase: install}}."""
    out: Dict[str, Any] = {}
    cur = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value
    return out
