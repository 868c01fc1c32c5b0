#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: helm_release_info
short_description: Status, history, values and manifest of Helm releases
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Reads one release, or every release of a namespace, with Helm 3 or Helm 4.
  - Values under credential-like keys and the data of Secrets in the manifest are masked.
options:
  name:
    description: The release. Every release of O(namespace) when left out.
    type: str
    aliases: [release_name]
  namespace:
    description: The release namespace.
    type: str
    required: true
    aliases: [release_namespace]
  get_all_values:
    description: Return the computed values (chart defaults included), not only the user-supplied ones.
    type: bool
    default: false
requirements:
  - helm 3.8 or newer, or helm 4
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

seealso:
  - module: lcm.openstack.helm_release
    description: Installs, upgrades, rolls back, tests or uninstalls a release.
  - module: lcm.openstack.phase_info
    description: Lists the Phases and ServiceLifecycle records of the services.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.info_module
  - lcm.openstack.attributes.platform
  - lcm.openstack.helm
  - kubernetes.core.helm_common_options
"""

EXAMPLES = r"""
- name: Read keystone's release
  lcm.openstack.helm_release_info:
    name: keystone
    namespace: openstack
  register: keystone_release

- name: Every release of the namespace, with its revision
  ansible.builtin.debug:
    msg: "{{ item.status.name }} revision {{ item.status.revision }} ({{ item.status.status }})"
  loop: "{{ keystone_release.releases }}"
"""

RETURN = r"""
releases:
  description: The releases found; empty when there is none.
  returned: always
  type: list
  elements: dict
  contains:
    status:
      description: The current revision (name, namespace, revision, chart, app_version, status, updated, description).
      type: dict
    history:
      description: Every revision, oldest first.
      type: list
      elements: dict
    release_values:
      description:
        - The user-supplied values (or all values with O(get_all_values)), credentials masked.
        - Named C(release_values), not C(values), so that Jinja's dot notation reaches it (C(values) is a dict method).
      type: dict
    manifest:
      description: The release manifest, Secret data masked.
      type: str
"""

from ansible_collections.kubernetes.core.plugins.module_utils.helm import AnsibleHelmModule
from ansible_collections.kubernetes.core.plugins.module_utils.helm_args_common import HELM_AUTH_MUTUALLY_EXCLUSIVE
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import helm_argument_spec
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm_release_info import run_helm_release_info


def argument_spec():
    spec = helm_argument_spec()
    spec.update(
        name=dict(type="str", aliases=["release_name"]),
        namespace=dict(type="str", required=True, aliases=["release_namespace"]),
        get_all_values=dict(type="bool", default=False),
    )
    return spec


def main():
    module = AnsibleHelmModule(argument_spec=argument_spec(), mutually_exclusive=HELM_AUTH_MUTUALLY_EXCLUSIVE,
                               supports_check_mode=True)
    run_helm_release_info(module)


if __name__ == "__main__":
    main()
