"""Every HTTP request the Python processes of a run send, noted client-side:
a sitecustomize on PYTHONPATH wraps urllib3's connection pool in each of
them (ansible-playbook, ansible, every module process), so a run's own
requests can be told from the rest of a shared apiserver's traffic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

# Writes "<time.time()> METHOD URL" for each request into $BENCH_REQUESTS_LOG.
HOOK = r'''
import os

if os.environ.get("BENCH_REQUESTS_LOG"):
    import time
    import urllib3.connectionpool as _pool

    _urlopen = _pool.HTTPConnectionPool.urlopen

    def _noted(pool, method, url, *args, **kwargs):
        with open(os.environ["BENCH_REQUESTS_LOG"], "a", encoding="utf-8") as out:
            out.write(f"{time.time():.6f} {method} {url}\n")
        return _urlopen(pool, method, url, *args, **kwargs)
    _pool.HTTPConnectionPool.urlopen = _noted
'''

Request = Tuple[float, str, str]  # when it was sent, method, URL


def hooked(scratch: Path, log: Path) -> Dict[str, str]:
    """The environment that makes a run note its requests into `log`."""
    hook = scratch / "requests-hook" / "sitecustomize.py"
    hook.parent.mkdir(parents=True, exist_ok=True)
    if not hook.exists():
        hook.write_text(HOOK)
    path = os.pathsep.join(p for p in (str(hook.parent), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "BENCH_REQUESTS_LOG": str(log)}


def noted(log: Path) -> List[Request]:
    """The requests noted in `log`, in the order they were sent."""
    out: List[Request] = []
    for line in log.read_text().splitlines() if log.exists() else []:
        when, method, url = line.split(" ", 2)
        out.append((float(when), method, url))
    return sorted(out)
