# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every layer shares: the lifecycle API's names and the phase types, errors that name their fix,
redaction, time formats, transient failures, the third-party imports, signals."""
