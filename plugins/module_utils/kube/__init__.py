# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster access without Ansible: CRDs as served, namespaces, retried requests, readiness rules,
the watch waiter and why an object is not ready, Leases."""
