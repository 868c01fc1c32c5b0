# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every chart of a site rendered once, all at once, for the order they state.

The plan reads each service's chart as its flow would install it (the
service's chart, chart version, values files and values) with `helm
template`, every job on: the order between releases is what their pods
declare, and a job the release leaves to a phase still runs in that release.
The renders run together (`Helm.run_together`): a render mostly waits on Helm's
start and its templates, and a site of a dozen charts costs a few of them.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import SiteError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, template_args
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered, parse_manifest

Key = Tuple[str, str]  # (namespace, service)


@dataclass
class ChartInput:
    """What a service's flow installs: its release, chart and values."""

    release: str
    chart: str
    chart_version: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    values_files: Sequence[str] = ()

    @classmethod
    def of(cls, raw: Mapping[str, Any], release: str) -> Optional["ChartInput"]:
        """From a site entry's chart keys; None for a service given no chart."""
        chart = raw.get("chart") or ""
        if not chart:
            return None
        values = raw.get("values") or {}
        if not isinstance(values, Mapping):
            raise SiteError(f"{raw.get('service')}: values must be a mapping (the host var values)")
        files = raw.get("values_files") or []
        if isinstance(files, str):
            files = [files]
        return cls(release, str(chart), str(raw.get("chart_version") or ""), values, [str(f) for f in files])


def render_all(helm: Helm, charts: Mapping[Key, ChartInput]) -> Dict[Key, List[Rendered]]:
    """Each service's rendered objects. A chart that does not render fails the
    plan naming the service and Helm's reason: a flow would fail on it too."""
    keys = sorted(charts)
    for key in keys:
        for path in charts[key].values_files:
            if not os.path.isfile(path):
                raise SiteError(f"{key[1]}: values file {path} does not exist (the host var values_files)")
    with ExitStack() as stack:
        calls = []
        for key in keys:
            given = charts[key]
            value_args = stack.enter_context(helm.values_args(given.values, given.values_files))
            calls.append(template_args(given.release, given.chart, key[0], given.chart_version or None, value_args))
        results = helm.run_together(calls)
    out: Dict[Key, List[Rendered]] = {}
    for key, result in zip(keys, results):
        if result.rc != 0:
            reason = (result.stderr or "").strip().removeprefix("Error: ")
            raise SiteError(f"{key[1]}: helm template {charts[key].chart} failed: {reason}. Fix the service's "
                            "chart, chart_version, values or values_files (its host vars)")
        out[key] = parse_manifest(result.stdout)
    return out
