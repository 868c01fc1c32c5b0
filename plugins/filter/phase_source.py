# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.phase_source: the source option of lcm.openstack.phase, as the phase roles give it."""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.lcm.openstack.plugins.plugin_utils.phase_source import PhaseSource, phase_source
from ansible_collections.lcm.openstack.plugins.plugin_utils.service_target import BadTarget

DOCUMENTATION = r"""
name: phase_source
short_description: The source option of a phase, from a role's target and variables
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Builds the O(lcm.openstack.phase#module:source) option as the phase roles (install, upgrade,
    rollback, uninstall, test) give it, in one place.
  - The chart and its version come from the target mapping (read as
    P(lcm.openstack.service_target#filter) reads it); the rest from the keyword arguments.
  - An option left unset is left out, so the module takes its own default - C(chart_version),
    O(selection) and O(stage_value) when empty, O(templates) and O(manifests) when null,
    O(values_from_release) unless true. The chart, the values and the values files are always given.
options:
  _input:
    description: The role's target mapping (C(service), C(release), C(namespace), C(chart), C(chart_version)).
    type: dict
    required: true
  values:
    description: The chart values for the phase.
    type: dict
    required: true
  values_files:
    description: Values files, applied before O(values).
    type: list
    elements: path
    required: true
  values_from_release:
    description: Render with the deployed release's values, O(values) on top.
    type: bool
    default: false
  templates:
    description: The templates the phase runs; null leaves the phase type's default mapping.
    type: list
    elements: str
  selection:
    description: How the phase picks its objects; empty leaves the module's default.
    type: str
    default: ''
  stage_value:
    description: The value a stage-gated chart reads the phase type from; empty leaves the module's default.
    type: str
    default: ''
  manifests:
    description: Objects, or files of them, for the phase; null gives none.
    type: list
    elements: raw
"""

EXAMPLES = r"""
- name: Run the test phase
  lcm.openstack.phase:
    type: test
    service: keystone
    namespace: openstack
    source: >-
      {{ {'service': 'keystone', 'chart': '/srv/charts/keystone'}
         | lcm.openstack.phase_source(values={}, values_files=[], values_from_release=true, stage_value='lifecycle.phase') }}
"""

RETURN = r"""
_value:
  description: The source mapping, without the options left unset.
  type: dict
"""


def _filter(target: Any, **options: Any) -> PhaseSource:
    try:
        return phase_source(target, **options)
    except BadTarget as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """A phase role's source option, built once."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        return {"phase_source": _filter}
