# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's side of live progress: one JSON line a change, sent to the
Unix socket the task's action plugin listens on (progress/channel.py).

The socket's path comes in the environment (ENV). Without it (a remote
connection, another runner, the module run on its own) every call is a
no-op, and so it becomes when the socket cannot be reached or stops taking
lines: progress is never a reason for a module to fail or to hang. What is
said is already worded and redacted by the caller; this file only carries it.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Mapping, Optional

ENV = "LCM_PROGRESS_SOCKET"
# The detail level of a line: 0 is always shown, 1 with -v.
SUMMARY, DETAIL = 0, 1
# How long one line may take to be taken; past it, progress is given up.
SEND_TIMEOUT = 5.0


class Emitter:
    """Sends lines to the controller; quietly does nothing once it cannot."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self._sock: Optional[socket.socket] = None
        self._broken = not path

    @property
    def active(self) -> bool:
        return not self._broken

    def say(self, text: str, level: int = SUMMARY) -> None:
        if self._broken:
            return
        line = json.dumps({"msg": " ".join(str(text).split()), "level": level}) + "\n"
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.settimeout(SEND_TIMEOUT)
                self._sock.connect(str(self.path))
            self._sock.sendall(line.encode("utf-8"))
        except OSError:
            self.close()
            self._broken = True

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None


_SHARED: dict = {}


def emitter(env: Optional[Mapping[str, str]] = None) -> Emitter:
    """The process's emitter for the channel named in the environment (one
    connection, however many parts of the engine speak)."""
    path = (os.environ if env is None else env).get(ENV) or None
    if path not in _SHARED:
        _SHARED[path] = Emitter(path)
    return _SHARED[path]
