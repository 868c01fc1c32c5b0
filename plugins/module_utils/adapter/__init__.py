# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ansible side of the modules, one file per module: its parameters in,
the engine called once, exit_json/fail_json out. The only package that
imports Ansible or kubernetes.core (connection.py, common.py); everything it
calls is tested without Ansible. Each file imports at its top only what its
module needs, so Ansible ships each module with only those module_utils."""
