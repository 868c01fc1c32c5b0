# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ServiceLifecycle record, the flows written on it, one run per service (the flow Lease),
and reading Phases and ServiceLifecycles back."""
