# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Helm process: started, then waited for, with what it printed.

Apart from helm/cli.py, which says what to run: this is how it runs, one
process or several at once (Helm.run_together)."""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor


class HelmError(LcmError):
    """Helm failed; `details` holds the command, stdout and stderr (redacted)."""


@dataclass
class Result:
    """What Helm printed, as is: for parsing. Only error() makes it presentable."""

    command: List[str]  # already redacted: it is only ever shown
    rc: int
    stdout: str
    stderr: str


class Started:
    """One Helm process, started. Its output goes to unnamed temporary files,
    not pipes: several can run at once and print any amount without one
    waiting on another's reader."""

    def __init__(self, command: List[str], env: Dict[str, str], timeout: float, redactor: Redactor) -> None:
        self.command, self.timeout, self.redactor = command, timeout, redactor
        self.deadline = time.monotonic() + timeout
        self.out, self.err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        try:
            # Not a `with`: the process outlives this call, stop() ends it.
            # Not AnsibleModule.run_command (which ansible-test 2.21 asks
            # for): it waits for its process, and several Helms run at once.
            self.proc = subprocess.Popen(  # pylint: disable=consider-using-with,ansible-bad-function
                command, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL, env=env)
        except FileNotFoundError as exc:
            self.out.close()
            self.err.close()
            raise HelmError(f"helm binary {command[0]} not found; set binary_path (helm_binary) or HELM_BIN") from exc

    def result(self) -> Result:
        """What Helm printed once it ended; a Helm still running at the deadline is killed."""
        rc = ended(self.proc, max(0.0, self.deadline - time.monotonic()))
        if rc is None:
            raise HelmError(f"helm {self.command[1]} did not finish in {self.timeout:.0f}s",
                            command=self.redactor.redact(" ".join(self.command)))
        return Result([self.redactor.redact(a) for a in self.command], rc, _text(self.out), _text(self.err))

    def stop(self) -> None:
        """Kill Helm if it still runs; close its output files."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()


def ended(proc: Any, timeout: float) -> Optional[int]:
    """The process's exit status once it ends, or None if it still runs after
    `timeout` seconds. Popen.wait(timeout) polls, sleeping up to 50 ms between
    looks, so a Helm read of a tenth of a second was seen ended up to 50 ms
    late, several times a call. Here a thread waits for the process without
    a timeout (the kernel wakes it when the process ends), and its end is
    what is waited for; after a timeout it ends with the process, which
    Started.stop() kills."""
    waiter = threading.Thread(target=proc.wait, name=f"helm-{proc.pid}", daemon=True)
    waiter.start()
    waiter.join(timeout)
    return None if waiter.is_alive() else proc.returncode


def _text(output: Any) -> str:
    output.seek(0)
    return output.read().decode("utf-8", errors="replace")
