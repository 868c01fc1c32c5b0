# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phase module's parameters as the engine's request. Apart from the
phase adapter because the traffic adapter builds its test-phase check with it
too, and importing it must not load the phase engine."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import given
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import BLOCK_NAMES, PhaseRequest, Source


def request_from_params(params: Dict[str, Any]) -> PhaseRequest:
    src = params.get("source") or {}
    return PhaseRequest(
        type=params["type"], service=params["service"], release=params.get("release") or params["service"],
        namespace=params["namespace"],
        source=Source(**given(src, "chart", "chart_version", "values", "values_files", "templates", "selection",
                              "stage_value", "manifests", "values_from_release")),
        blocks={b: params.get(b) for b in BLOCK_NAMES}, helm_binary=params.get("binary_path"),
        **given(params, "name", "target_version", "release_revision", "timeout", "wait"))
