#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: phase_info
short_description: List lifecycle Phases and ServiceLifecycle records
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Lists C(Phase) resources, oldest first, and C(ServiceLifecycle) records,
    filtered by service, phase type and state.
options:
  namespace:
    description: Only this namespace. All namespaces when left out.
    type: str
  service:
    description: Only this service.
    type: str
  type:
    description: Only Phases of this type.
    type: str
    choices: [install, test, upgrade, rollback, uninstall, trafficdrain, trafficrollout, check, contract]
  state:
    description: Only Phases in this state.
    type: str
    choices: [Pending, Running, Succeeded, Failed]
  name:
    description: Only the Phase of this name.
    type: str
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

seealso:
  - module: lcm.openstack.phase
    description: Runs one lifecycle phase and records it as a Phase.
  - module: lcm.openstack.service_lifecycle
    description: Keeps the ServiceLifecycle record of a service.
  - module: lcm.openstack.update_status
    description: Reports how the updates of every service go.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.info_module
  - lcm.openstack.attributes.platform
  - kubernetes.core.k8s_auth_options
"""

EXAMPLES = r"""
- name: Every failed phase of keystone
  lcm.openstack.phase_info:
    namespace: openstack
    service: keystone
    state: Failed
  register: failed_phases

- name: Where is each service?
  lcm.openstack.phase_info:
    namespace: openstack
  register: lifecycle
- ansible.builtin.debug:
    msg: "{{ lifecycle.lifecycles | items2dict(key_name='service', value_name='state') }}"
"""

RETURN = r"""
phases:
  description: Matching Phases, oldest first (by start, else creation, time; then by name), as M(lcm.openstack.phase) returns them.
  returned: always
  type: list
  elements: dict
  sample:
    - name: keystone-install-1f2e3d4c
      type: install
      service: keystone
      state: Succeeded
      duration_seconds: 6
      objects: [{kind: Job, name: keystone-db-sync, state: Current, message: 1/1 succeeded}]
lifecycles:
  description: Matching ServiceLifecycle records.
  returned: always
  type: list
  elements: dict
  sample:
    - service: keystone
      state: Operational
      current_version: "2025.1"
      previous_version: "2024.2"
      current_phase: null
      flow: {name: greenfield, state: Succeeded, phases: [{phase: install, result: Succeeded, duration_seconds: 12}]}
      history: [{name: keystone-install-1f2e3d4c, type: install, result: Succeeded}]
      report: "keystone (openstack): greenfield flow Succeeded ..."
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import auth_argument_spec
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase_info import run_phase_info
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_STATES, PHASE_TYPES


def argument_spec():
    spec = dict(
        namespace=dict(type="str"),
        service=dict(type="str"),
        type=dict(type="str", choices=list(PHASE_TYPES)),
        state=dict(type="str", choices=list(PHASE_STATES)),
        name=dict(type="str"),
    )
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_phase_info(module)


if __name__ == "__main__":
    main()
