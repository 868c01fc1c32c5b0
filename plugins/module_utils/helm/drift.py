# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a release is what is asked, and the diff that shows where not.

A release needs an upgrade when its last revision is not deployed, its chart
is another, its objects differ from the chart rendered with the values asked
for, or its stored values do (compared as Helm stores them). Apart from the
release manager (helm/release.py) because it only reads: the manager acts
on its answer.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import yaml
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result, merged_values, template_args
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import masked_manifest, parse_manifest


def render_args(req: Any, value_args: List[str]) -> List[str]:
    """The `helm template` of the release as it would be (no hooks, no tests)."""
    return template_args(req.name, req.chart, req.namespace, req.chart_version, value_args,
                         ["--no-hooks", "--skip-tests"])


def rendered(helm: Helm, req: Any, result: Result) -> str:
    """The manifest render_args' run printed; a chart that does not render said so."""
    if result.rc != 0:
        exc = helm.error(result)
        raise HelmError(f"chart {req.chart}"
                        f"{' version ' + req.chart_version if req.chart_version else ''}"
                        f" cannot be rendered: {exc.details.get('stderr', str(exc)).strip()}", **exc.details)
    return result.stdout


def check_local_chart_version(req: Any, chart: ChartSource) -> None:
    """Helm ignores --version for a chart on disk; say so instead of installing another version."""
    if req.chart_version and chart.on_disk:
        version = str(chart.metadata().get("version"))
        if version != req.chart_version.lstrip("v"):
            raise HelmError(f"chart {req.chart} is version {version}, not {req.chart_version}; "
                            "fix chart_version, or point chart at that version")


def current_manifest(history: List[Dict[str, Any]], manifest: Callable[[], str]) -> str:
    """The manifest of the release's last revision ('' when it has none)."""
    if not history or history[-1].get("status") == "uninstalled":
        return ""
    return manifest()


def needed(req: Any, history: List[Dict[str, Any]], desired: str, current: str,
           chart: Callable[[], Mapping[str, Any]], deployed_values: Callable[[], Mapping[str, Any]]) -> Optional[str]:
    """install, upgrade, or None when the release is already what is asked.
    chart and deployed_values are asked only when the answer still depends on them."""
    if not history or history[-1].get("status") == "uninstalled":
        return "install"
    last = history[-1]
    if last.get("status") != "deployed":
        return "upgrade"  # a failed release is upgraded, not left stuck
    meta = chart()
    if last.get("chart") != f"{meta.get('name')}-{meta.get('version')}":
        return "upgrade"
    if _objects(desired) != _objects(current):
        return "upgrade"
    if not req.set_values and not req.reuse_values:
        if _normalise(deployed_values()) != _normalise(user_values(req)):
            return "upgrade"
    return None


def user_values(req: Any) -> Dict[str, Any]:
    """The values the request asks for (merged_values)."""
    return merged_values(req.values_files, req.values)


def diff(release: str, before: str, after: str) -> Dict[str, str]:
    """The --diff of a release: its manifests, Secrets masked."""
    return {"before_header": f"{release} (deployed)", "after_header": f"{release} (rendered)",
            "before": masked_manifest(before), "after": masked_manifest(after)}


def _objects(manifest: str) -> Dict[str, Any]:
    return {f"{r.obj.get('apiVersion')}/{r.key}": r.obj for r in parse_manifest(manifest)}


def _normalise(values: Any) -> Any:
    """Values as Helm stores them: YAML round-trip, so 1 and 1.0, '' and None compare alike."""
    return yaml.safe_load(yaml.safe_dump(values or {})) or {}
