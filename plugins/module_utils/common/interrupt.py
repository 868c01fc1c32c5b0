# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run stopped by a signal leaves its Phase attachable, and says so.

An operator's Ctrl-C reaches the module as SIGINT (it shares the terminal's
process group); AWX cancelling a job sends SIGINT, and SIGTERM where that is
not enough; a service manager stops with SIGTERM. Python's default for
SIGTERM is to die on the spot, and SIGINT becomes a KeyboardInterrupt that
`except Exception` does not catch: either way the Phase stayed Running with
nothing to say why. Within `stopped_by_signal()`, both raise `Interrupted`,
which the phase runner catches to record the interruption and end the task
with one line, leaving the Phase Running (its Jobs go on) for a re-run with
the same inputs to attach to. SIGKILL cannot be caught: a Phase left by it
is found Running and attached to the same way, without the note.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Dict, Iterator

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """The run was stopped by a signal. A BaseException, as KeyboardInterrupt
    is: code that handles errors with `except Exception` must not swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signal = signal.Signals(signum).name


@contextlib.contextmanager
def stopped_by_signal() -> Iterator[None]:
    """SIGTERM and SIGINT raise Interrupted inside the block, once: the first
    signal puts the handlers before it back, so a second one (a second
    Ctrl-C while the interruption is recorded) stops the run at once. Outside
    the main thread, where Python lets no handler be set, the block runs as
    it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before: Dict[int, Any] = {}

    def restore() -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)

    def interrupted(signum: int, _frame: Any) -> None:
        restore()
        raise Interrupted(signum)

    before.update({s: signal.signal(s, interrupted) for s in SIGNALS})
    try:
        yield
    finally:
        restore()
