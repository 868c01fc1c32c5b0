# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs lcm.openstack.phase, showing its progress lines as they come (plugin_utils/progress_action.py)."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.plugin_utils.progress_action import ProgressAction


class ActionModule(ProgressAction):
    """lcm.openstack.phase, with live progress."""
