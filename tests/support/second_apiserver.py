"""A second kube-apiserver on the bed's etcd, to kill and restart mid-wait.

A production control plane runs several apiservers behind one address; when
one of them restarts, the clients connected to it lose their connections and
their watches, and the cluster goes on: the controllers, talking to another
apiserver, keep running Jobs. This is that: the bed's own apiserver keeps
the Job controller and the fake kubelet going, and the module under test
talks only to this one, which a test kills (SIGKILL, no goodbye) and starts
again. Killing the bed's own apiserver instead would stop every other suite
that shares the bed.

It runs with the bed's apiserver's own arguments (read from /proc), on
another port, without the endpoint reconciler (the two would otherwise take
turns writing the `kubernetes` Service's endpoints).
"""

from __future__ import annotations

import copy
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import List, Optional

import yaml

from support.ansible import ROOT


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SecondApiserver:
    def __init__(self, kubeconfig: str, workdir: Path, state: Path = ROOT / ".cluster") -> None:
        pid = int((state / "pids" / "kube-apiserver.pid").read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        self.binary = os.readlink(f"/proc/{pid}/exe")
        self.port = _free_port()
        self.args = _args([a.decode() for a in argv[1:]], self.port)
        self.pki = state / "pki"
        self.log = workdir / "second-apiserver.log"
        self.kubeconfig = workdir / "kubeconfig-second-apiserver"
        cfg = yaml.safe_load(Path(kubeconfig).read_text(encoding="utf-8"))
        cfg = copy.deepcopy(cfg)
        cfg["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        self.kubeconfig.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        self.process: Optional[subprocess.Popen] = None
        self.kills = 0

    def start(self, timeout: float = 90) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([self.binary, *self.args], stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"the second apiserver exited ({self.process.returncode}); see {self.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the second apiserver was not ready within {timeout:.0f}s; see {self.log}")
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL: every connection ends at once, nothing is drained."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)

    def ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        context.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}/readyz", context=context,
                                        timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False


def _args(args: List[str], port: int) -> List[str]:
    out: List[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--secure-port", "--endpoint-reconciler-type"):
            skip = "=" not in arg and i + 1 < len(args)
            continue
        out.append(arg)
    return out + ["--secure-port", str(port), "--endpoint-reconciler-type", "none"]
