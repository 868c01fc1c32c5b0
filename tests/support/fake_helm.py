"""A helm for unit tests: prints its version and a canned history, and logs every call."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Dict, List


def fake_helm(tmp_path: Path, version: str, history: List[Dict[str, Any]]) -> Path:
    """A helm that prints its version and a canned history, and logs every call."""
    log = tmp_path / "calls.jsonl"
    script = tmp_path / "helm"
    script.write_text(f"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
with open({str(log)!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
if args[:1] == ["version"]:
    print({version!r}, end="")
elif args[:1] == ["history"]:
    print(json.dumps({history!r}))
elif args[:1] == ["rollback"]:
    print("Rollback was a success!")
else:
    sys.exit(0)
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script
