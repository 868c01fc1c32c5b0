"""galaxy-importer, the check Galaxy and Automation Hub run on an upload,
on the collection tarball as `ansible-galaxy collection build` writes it.

galaxy-importer runs in a virtualenv of its own (`make publish-check` makes
it from tests/publish/requirements.txt), offline: no ansible-test (it would
pull a container image), ansible-lint with --offline, and kubernetes.core,
whose doc fragments and modules the collection uses, from this virtualenv's
`ansible` package on the importer's Python path. The importer logs what it
finds wrong as warnings and errors and still exits 0, so every such line
fails the check here, as does a plugin without documentation or a role
without a README.

    python -m support.galaxy_import --importer .venv-publish
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

from support import tarball
from support.paths import ROOT

CONFIG = ROOT / "tests" / "publish" / "galaxy-importer.cfg"
# Addresses nothing listens on: whatever tries the network fails at once.
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "ANSIBLE_GALAXY_SERVER": "http://127.0.0.1:9"}
# Content the importer lists without documentation of its own.
_UNDOCUMENTED = {"module_utils", "doc_fragments", "playbook", "role"}
_PROBLEM = re.compile(r"^(WARNING|ERROR|CRITICAL)\b")
# The importer points out any sanity ignore file for a reviewer to read. Ours
# skips yamllint on the Helm chart templates and nothing else
# (tests/tooling/test_sanity_ignores.py); the warning is expected for it as
# committed, with that many lines, and for nothing more.
_IGNORES = re.compile(r"^WARNING: Ignore files skip ansible-test sanity tests, "
                      r"found (?P<file>ignore-[^ ]+\.txt) with (?P<count>\d+) statement\(s\)$")


def expected_ignores() -> Dict[str, int]:
    """The committed ignore files and their number of lines."""
    return {p.name: len(p.read_text().splitlines()) for p in (ROOT / "tests" / "sanity").glob("ignore-*.txt")}


def problems(log: str, result: Dict[str, Any], roles: List[str], ignores: Dict[str, int]) -> List[str]:
    """What keeps the import from being clean: the importer's warnings and
    errors (but the one naming a committed ignore file as it is), plugins it
    found no documentation for, roles without a README."""
    out = []
    for line in log.splitlines():
        m = _IGNORES.match(line)
        if m and ignores.get(m["file"]) == int(m["count"]):
            continue
        if _PROBLEM.match(line):
            out.append(line)
    docs = result.get("docs_blob") or {}
    if not (docs.get("collection_readme") or {}).get("html"):
        out.append("collection: no README")
    seen = set()
    contents = docs.get("contents") or []
    # An action plugin is documented by the module of its name (ansible-doc
    # shows the module's documentation for it).
    modules = {item.get("content_name") for item in contents
               if item.get("content_type") == "module" and item.get("doc_strings")}
    for item in contents:
        kind, name = item.get("content_type"), item.get("content_name")
        if kind == "action" and name in modules:
            continue
        if kind == "role":
            seen.add(name)
            if not item.get("readme_html"):
                out.append(f"role {name}: no README")
        elif kind not in _UNDOCUMENTED and not item.get("doc_strings"):
            out.append(f"{kind} {name}: no documentation")
    out += [f"role {name}: not found by the importer" for name in sorted(set(roles) - seen)]
    return out


def summary(result: Dict[str, Any]) -> str:
    """`<namespace>.<name> <version>: 8 module, 9 role, ...`."""
    counts: Dict[str, int] = {}
    for item in (result.get("docs_blob") or {}).get("contents") or []:
        counts[item["content_type"]] = counts.get(item["content_type"], 0) + 1
    meta = result.get("metadata") or {}
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return f"{meta.get('namespace')}.{meta.get('name')} {meta.get('version')}: {kinds}"


def _dependencies(work: Path) -> Path:
    """kubernetes.core as importable Python, the way ansible-core finds
    collections on sys.path (the importer sets the collections path to its
    own scratch directory)."""
    from ansible_collections.kubernetes import core  # pylint: disable=import-outside-toplevel

    deps = work / "deps"
    shutil.copytree(list(core.__path__)[0], deps / "ansible_collections" / "kubernetes" / "core")
    return deps


def run(importer: Path, work: Path) -> int:
    """Build, import, report; 0 when the import is clean."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    built = tarball.build(work / "dist")
    env = dict(os.environ, **OFFLINE)
    env.update(PATH=f"{importer / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=str(_dependencies(work)), GALAXY_IMPORTER_CONFIG=str(CONFIG),
               ANSIBLE_HOME=str(work / "ansible-home"))
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)
    proc = subprocess.run([str(importer / "bin" / "python"), "-m", "galaxy_importer.main", str(built)],
                          cwd=work, env=env, capture_output=True, text=True, check=False)
    log = proc.stdout + proc.stderr
    (work / "importer.log").write_text(log)
    print(log, end="")
    if proc.returncode != 0:
        print(f"galaxy-importer exited {proc.returncode}", file=sys.stderr)
        return 1
    result = json.loads((work / "importer_result.json").read_text())
    roles = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())
    found = problems(log, result, roles, expected_ignores())
    for line in found:
        print(f"FAILED: {line}", file=sys.stderr)
    if not found:
        print(f"galaxy-importer: clean import of {built.name}: {summary(result)}")
    return 1 if found else 0


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--importer", type=Path, required=True, help="the virtualenv galaxy-importer is installed in")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "publish")
    args = parser.parse_args(argv)
    return run(args.importer.resolve(), args.work.resolve())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
