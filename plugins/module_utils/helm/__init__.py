# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm CLI (Helm 3 and 4), releases brought to a state, their history, storage, leftovers and
Lease, and rendering a chart into the objects a phase may own."""
