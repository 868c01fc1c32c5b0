# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module process's end without the interpreter's last pass over its heap.

exit_json and fail_json end the process with sys.exit; Python then
finalizes, and its last garbage collection walks every object still alive:
the kubernetes client, the rendered chart, the watch state. Measured on a
one-Job phase, the time from the atexit handlers to the process's end was
0.12 to 0.15 s; with the heap frozen first (gc.freeze: what is alive moves
out of the collector's generations), 0.03 s. That is time after the task's
answer is written, which the play waits for all the same.

Nothing this collection finds is needed: the result is on stdout already,
files are closed by the code that opened them, the Lease renewer is another
process, and Ansible's own atexit handlers (its temporary directory) still
run, after this one (handlers run last registered, first).
"""

from __future__ import annotations

import atexit
import gc

_registered = []


def freeze_heap_at_exit() -> None:
    """Freeze the heap when the process ends; once per process."""
    if not _registered:
        atexit.register(gc.freeze)
        _registered.append(True)
