# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """The attributes every lcm.openstack module documents. Each module says
    its own support level (full, partial with details, none, N/A)."""

    # check_mode and diff_mode: the meaning of each; the level is the module's.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and tell whether it would change something, without changing it.
  diff_mode:
    description: Returns what changed (or would change, in check mode) when run with C(--diff).
"""

    # Every module of this collection is in the action group of meta/runtime.yml.
    ACTION_GROUP = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/lcm.openstack.lifecycle) in C(module_defaults) to set its connection options.
    support: full
    membership:
      - lcm.openstack.lifecycle
"""

    # The modules run where the Kubernetes API is reachable, usually the control node.
    PLATFORM = r"""
options: {}
attributes:
  platform:
    description: The host the module runs on, from where it reaches the Kubernetes API; usually the control node.
    support: full
    platforms: posix
"""

    # A module that reads and never writes.
    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details: The module only reads; it runs in check mode as it does otherwise.
  diff_mode:
    support: N/A
    details: The module changes nothing, so there is nothing to diff.
"""
