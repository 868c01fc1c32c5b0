# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traffic drain and rollout on the same Phase record: the runner, its backends (selector gate,
blue/green by track, canary weights), endpoints and checks."""
