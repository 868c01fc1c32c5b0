"""A loopback TCP proxy in front of the apiserver that drops connections on
demand: what a flaky network, a load balancer's idle reset or an apiserver
behind a restarting proxy does to a client. TLS passes through untouched (the
apiserver's certificate names 127.0.0.1), so the client sees exactly a
connection reset or a response cut short."""

from __future__ import annotations

import copy
import select
import socket
import threading
from pathlib import Path
from typing import List, Optional, Tuple
from urllib.parse import urlparse

import yaml


class Proxy:
    def __init__(self, upstream: Tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs: List[Tuple[socket.socket, socket.socket]] = []
        self.dropped = 0  # connections cut by drop()
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    @classmethod
    def for_kubeconfig(cls, kubeconfig: str, out: Path) -> "Proxy":
        """A proxy in front of the kubeconfig's server, and a copy of the
        kubeconfig at `out` that goes through it."""
        cfg = yaml.safe_load(Path(kubeconfig).read_text(encoding="utf-8"))
        server = urlparse(cfg["clusters"][0]["cluster"]["server"])
        proxy = cls((server.hostname or "127.0.0.1", server.port or 443))
        through = copy.deepcopy(cfg)
        through["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
        out.write_text(yaml.safe_dump(through), encoding="utf-8")
        return proxy

    def drop(self) -> int:
        """Cut every open connection (a reset to both ends); new ones are still accepted."""
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for sock in pair:
                _reset(sock)
        self.dropped += len(pairs)
        return len(pairs)

    def drop_every(self, seconds: float) -> threading.Event:
        """Drop every `seconds` until the returned event is set."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(seconds):
                self.drop()
        threading.Thread(target=loop, daemon=True, name="proxy-dropper").start()
        return stop

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
        self.drop()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _addr = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                _reset(client)
                continue
            with self.lock:
                self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True, name="proxy-pump").start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        peers = {client: server, server: client}
        try:
            while True:
                readable, _w, _x = select.select(list(peers), [], [], 1.0)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for sock in (client, server):
                _close(sock)
            with self.lock:
                if (client, server) in self.pairs:
                    self.pairs.remove((client, server))


def _reset(sock: socket.socket) -> None:
    """Close with RST, as a dropped connection looks to the other end."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    _close(sock)


def _close(sock: Optional[socket.socket]) -> None:
    try:
        sock.close()
    except OSError:
        pass
