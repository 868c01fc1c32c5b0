"""The collection tarball as `ansible-galaxy collection build` writes it,
for the tests of what ships."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path
from typing import List

from support.paths import ROOT

BIN = Path(sys.executable).parent


def build(dest: Path) -> Path:
    """Build the collection from the checkout into `dest`; the tarball's path."""
    out = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", str(ROOT),
                          "--output-path", str(dest), "--force"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    built = sorted(dest.glob("lcm-openstack-*.tar.gz"))
    assert len(built) == 1, built
    return built[0]


def files(tarball: Path) -> List[str]:
    """The regular files in the tarball, as paths inside the collection."""
    with tarfile.open(tarball) as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())
