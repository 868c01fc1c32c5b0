# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a flow does next, decided from the service's ServiceLifecycle record,
the flow's inputs and what Helm says: one decision table per flow kind
(greenfield, update, rollback, remove), the Step and Plan they return and the
rules they share (steps). The flow playbooks run the steps a Plan names and
decide nothing themselves."""
