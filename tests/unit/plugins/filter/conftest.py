"""The collection's filters as a playbook reaches them: by their FQCN, in a
template Ansible renders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Mapping

import pytest

from support.ansible import PLAIN_TEXT
from support.paths import ROOT

BIN = Path(sys.executable).parent


@pytest.fixture
def render(tmp_path: Path) -> Callable[[str, Mapping[str, Any]], Dict[str, Any]]:
    """render(expression, variables): the result of a debug task whose msg is
    `{{ expression }}` with those variables: msg, or failed and msg."""

    def run(expression: str, variables: Mapping[str, Any]) -> Dict[str, Any]:
        (tmp_path / "vars.json").write_text(json.dumps(dict(variables)))
        playbook = [{"hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "render", "ansible.builtin.debug": {"msg": "{{ " + expression + " }}"}}]}]
        (tmp_path / "play.yml").write_text(json.dumps(playbook))
        env = dict(os.environ, **PLAIN_TEXT)
        env.update(ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
                   ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
        proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml"),
                               "-e", f"@{tmp_path / 'vars.json'}"], capture_output=True, text=True, env=env, check=False)
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            pytest.fail(f"ansible-playbook said no JSON: {proc.stdout}{proc.stderr}")
        return out["plays"][0]["tasks"][0]["hosts"]["localhost"]

    return run
