# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One phase run: its request and identity, which objects it owns and in which order, applying them,
the Phase record from started to ended, its status, resume and stop, database backups."""
