# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """The service a lifecycle module acts on: the OpenStack service and its Helm release."""

    DOCUMENTATION = r"""
options:
  service:
    description: The OpenStack service, for example C(keystone); its ServiceLifecycle is named after it.
    type: str
    required: true
  release:
    description: The Helm release of the service. Defaults to O(service).
    type: str
"""
