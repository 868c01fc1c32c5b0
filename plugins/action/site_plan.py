# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs lcm.openstack.site_plan as Ansible's normal action does, its payload built faster (plugin_utils/module_action.py)."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.plugin_utils.module_action import ModuleAction


class ActionModule(ModuleAction):
    """lcm.openstack.site_plan."""
