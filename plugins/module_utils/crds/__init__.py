# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own kinds as typed records: the Phase, the ServiceLifecycle and the
UpdateStatus, their spec and status as the apiserver holds them (camelCase keys), and the
accessors that read a body's spec, status and flow."""
