# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each Helm binary's version, remembered across module runs.

Every helm_release and phase run needs the binary's major (Helm 3 and 4 take
different flags), and `helm version` is a process of its own: on a call that
changes nothing it was one of two Helm processes. The version is kept per
binary file, keyed by the file as it is (its real path, device, inode, size
and times): a binary replaced or upgraded is another key and is asked again,
so what is remembered is exact. Kept in memory for the process, and in a
small JSON file under the user's cache directory (XDG_CACHE_HOME, else
~/.cache) for the next runs; a cache that cannot be read or written is
ignored, never an error.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Dict, Optional, Tuple

_MEMORY: Dict[Tuple[Any, ...], str] = {}
# Entries kept in the file at most; the oldest go first (binaries come and go).
LIMIT = 32


def cache_file(env: Optional[Dict[str, str]] = None) -> str:
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lcm-openstack", "helm-versions.json")


def identity(binary: str) -> Optional[Tuple[Any, ...]]:
    """The binary's file (None for a bare name, which PATH resolves, or a file not there)."""
    try:
        path = os.path.realpath(binary) if os.sep in binary else None
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st else None


def version_of(binary: str, ask: Callable[[], str], path: Optional[str] = None) -> str:
    """The binary's version: remembered, or `ask`ed (helm version) and remembered."""
    key = identity(binary)
    if key is None:
        return ask()
    if key in _MEMORY:
        return _MEMORY[key]
    path = path or cache_file()
    text = json.dumps(key)
    stored = _read(path)
    if text in stored:
        _MEMORY[key] = stored[text]
        return stored[text]
    version = ask()
    _MEMORY[key] = version
    stored[text] = version
    _write(path, dict(list(stored.items())[-LIMIT:]))
    return version


def _read(path: str) -> Dict[str, str]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def _write(path: str, entries: Dict[str, str]) -> None:
    """Atomically (a rename), so two runs at once each leave a whole file."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".helm-versions-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entries, handle)
        os.replace(tmp, path)
    except OSError:
        pass
