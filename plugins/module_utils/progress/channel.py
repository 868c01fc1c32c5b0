# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's side of live progress: a Unix socket in a private
directory (0700) that a module connects to (progress/emitter.py), read by a
thread while the module runs, each line handed to `show` as it arrives.

Event-driven: the thread blocks in select() on the socket, the module's
connection and a wake-up pipe; nothing is polled. Closing drains what the
module sent before it exited, then stops, so every line is shown before the
task's result. Runs in the controller's worker process, without Ansible
(the action plugins pass `show`).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import tempfile
import threading
from typing import Callable, Dict, List, Optional

Show = Callable[[str, int], None]  # (text, level)
# The longest line taken; a longer one is cut (a module never sends one).
MAX_LINE = 64 * 1024
# How long closing waits for the reader to drain what is left.
DRAIN_SECONDS = 5.0


def parse(raw: bytes) -> Optional[Dict[str, object]]:
    """One line as the emitter sends it; None for anything else."""
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("msg"), str):
        return None
    level = data.get("level")
    return {"msg": data["msg"], "level": level if isinstance(level, int) else 0}


class Channel:
    """`with Channel(show) as path:` a socket at `path` while the block runs."""

    def __init__(self, show: Show) -> None:
        self.show = show
        self.path = ""
        self._dir = ""
        self._listener: Optional[socket.socket] = None
        self._wake_r = self._wake_w = -1
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> str:
        self._dir = tempfile.mkdtemp(prefix="lcm-progress-")  # mode 0700: only this user connects
        self.path = os.path.join(self._dir, "s")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        self._listener.listen(4)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._read, name="lcm-progress", daemon=True)
        self._thread.start()
        return self.path

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(DRAIN_SECONDS)
            self._thread = None
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = ""

    # -- the reader thread -------------------------------------------------
    def _read(self) -> None:
        conns: Dict[socket.socket, bytearray] = {}
        stopping = False
        try:
            while True:
                # Once told to stop, only what is readable now: the module has
                # exited, and a process it left behind must not hold the task.
                waiting: List[object] = [self._listener, *conns] + ([] if stopping else [self._wake_r])
                ready = select.select(waiting, [], [], 0 if stopping else None)[0]
                if not ready:
                    return
                for r in ready:
                    if r == self._wake_r:
                        stopping = True
                    elif r is self._listener:
                        conn = self._listener.accept()[0]
                        conns[conn] = bytearray()
                    elif not self._take(r, conns[r]):
                        self._flush(conns.pop(r))
                        r.close()
        finally:
            for conn, buf in conns.items():
                self._flush(buf)
                conn.close()

    def _take(self, conn: socket.socket, buf: bytearray) -> bool:
        """Read what is there and show each whole line; False at the end."""
        try:
            data = conn.recv(65536)
        except OSError:
            return False
        if not data:
            return False
        buf += data
        while b"\n" in buf:
            raw, rest = bytes(buf).split(b"\n", 1)
            buf[:] = rest
            self._one(raw)
        if len(buf) > MAX_LINE:
            self._one(bytes(buf[:MAX_LINE]))
            buf.clear()
        return True

    def _flush(self, buf: bytearray) -> None:
        if buf.strip():
            self._one(bytes(buf))
        buf.clear()

    def _one(self, raw: bytes) -> None:
        line = parse(raw)
        if line is not None:
            self.show(str(line["msg"]), int(line["level"]))  # type: ignore[call-overload]
