# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.service_target: a role's target mapping with the defaults of its keys."""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.lcm.openstack.plugins.plugin_utils.service_target import BadTarget, ServiceTarget, service_target

DOCUMENTATION = r"""
name: service_target
short_description: A role's target mapping with the defaults of its keys
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Reads the mapping a role of this collection takes as C(<role>_target) (a flow's
    C(flow_target)) and fills in the keys left out or given empty - C(release) is the
    service's name, C(namespace) is C(openstack), C(chart) and C(chart_version) are empty.
  - Every role reads its target through it once, so the defaults live in one place.
  - A mapping without a C(service) fails, naming the input it came from.
options:
  _input:
    description: The target mapping, with the keys C(service) (required), C(release), C(namespace),
      C(chart) and C(chart_version).
    type: dict
    required: true
  name:
    description: The input the mapping came from, named by the error for a bad one.
    type: str
    default: target
"""

EXAMPLES = r"""
- name: The release a role acts on
  ansible.builtin.debug:
    # keystone-a, in the namespace openstack
    msg: "{{ ({'service': 'keystone', 'release': 'keystone-a'} | lcm.openstack.service_target('install_target')).release }}"
"""

RETURN = r"""
_value:
  description: The mapping with the keys C(service), C(release), C(namespace), C(chart) and
    C(chart_version), each set.
  type: dict
"""


def _filter(target: Any, name: str = "target") -> ServiceTarget:
    try:
        return service_target(target, name)
    except BadTarget as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """A role's target mapping, read once."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        return {"service_target": _filter}
