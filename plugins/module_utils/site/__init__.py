# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a whole site before anything changes: its services and their
dependencies (model), the order they go in (graph), which flow each needs
(decide, from the ServiceLifecycles read in records), and the plan (plan)."""
