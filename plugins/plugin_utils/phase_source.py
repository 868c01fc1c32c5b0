# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The `source` option of lcm.openstack.phase, as the phase roles (install,
upgrade, rollback, uninstall, test) give it (filter lcm.openstack.phase_source).

The chart and its version come from the role's target mapping; the values,
values files and how the phase picks its objects from the role's own
variables. An option the role leaves unset is left out, so the module takes
its own default:

- chart_version, selection and stage_value when empty;
- templates and manifests when null (an empty list is given as it is);
- values_from_release unless true.

The chart, the values and the values files are always given.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, TypedDict

from ansible_collections.lcm.openstack.plugins.plugin_utils.service_target import service_target


class PhaseSource(TypedDict, total=False):
    """lcm.openstack.phase's source option, the keys a role sets."""

    chart: str
    chart_version: str
    values: Mapping[str, Any]
    values_files: List[str]
    values_from_release: bool
    templates: List[str]
    selection: str
    stage_value: str
    manifests: List[Any]


def phase_source(target: Any, *, values: Mapping[str, Any], values_files: List[str], values_from_release: bool = False,
                 templates: Optional[List[str]] = None, selection: str = "", stage_value: str = "",
                 manifests: Optional[List[Any]] = None) -> PhaseSource:
    """The source mapping of a phase run on `target` (a role's target mapping):
    the values and values files as given, the other options when set."""
    full = service_target(target)
    source = PhaseSource(chart=full["chart"], values=values, values_files=values_files)
    if full["chart_version"]:
        source["chart_version"] = full["chart_version"]
    if values_from_release:
        source["values_from_release"] = True
    if templates is not None:
        source["templates"] = templates
    if selection:
        source["selection"] = selection
    if stage_value:
        source["stage_value"] = stage_value
    if manifests is not None:
        source["manifests"] = manifests
    return source
