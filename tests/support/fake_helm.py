"""A helm for unit tests: prints its version and a canned history, and logs
every call; and for fake Helm classes that answer in _run_once, a _start
that answers at once (Helm.run_together starts its reads with _start)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Dict, List, Sequence


class Answered:
    """A Helm run that has ended already, as Helm._start gives one."""

    def __init__(self, result: Any) -> None:
        self.answer = result

    def result(self) -> Any:
        return self.answer

    def stop(self) -> None:
        """Nothing runs."""


def start_at_once(helm: Any, args: Sequence[str], timeout: Any) -> Answered:
    """Helm._start for a fake that answers in _run_once: the answer, in call order."""
    return Answered(helm._run_once(args, timeout))  # pylint: disable=protected-access


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
elif args[:1] == ["status"]:
    last = ({history!r} or [None])[-1]
    if last is None:
        print("Error: release: not found", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({{"name": args[1], "version": last["revision"], "info": {{"status": last["status"]}},
                      "manifest": "", "config": None}}))
elif args[:1] == ["rollback"]:
    print("Rollback was a success!")
else:
    sys.exit(0)
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script
