"""plugins/module_utils/helm/versions.py: a Helm binary's version asked once,
then remembered for the file as it is, in memory and across runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import versions


def _binary(tmp_path: Path, name: str = "helm") -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


class _Ask:
    def __init__(self, answer: str) -> None:
        self.answer, self.asked = answer, 0

    def __call__(self) -> str:
        self.asked += 1
        return self.answer


def _next_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another module run: nothing in memory."""
    monkeypatch.setattr(versions, "_MEMORY", {})


def test_asked_once_then_remembered_in_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary, ask = _binary(tmp_path), _Ask("v3.22.0")
    assert versions.version_of(binary, ask) == "v3.22.0"
    assert versions.version_of(binary, ask) == "v3.22.0"
    _next_run(monkeypatch)
    assert versions.version_of(binary, ask) == "v3.22.0"
    assert ask.asked == 1
    assert Path(versions.cache_file()).is_file()


def test_a_binary_replaced_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = _binary(tmp_path)
    assert versions.version_of(binary, _Ask("v3.22.0")) == "v3.22.0"
    os.remove(binary)
    Path(binary).write_text("#!/bin/sh\n# helm 4\n")
    _next_run(monkeypatch)
    upgraded = _Ask("v4.3.1")
    assert versions.version_of(binary, upgraded) == "v4.3.1" and upgraded.asked == 1


def test_a_bare_name_is_asked_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    ask = _Ask("v3.22.0")
    versions.version_of("helm", ask)
    versions.version_of("helm", ask)
    assert ask.asked == 2


@pytest.mark.parametrize("content", ["not json", '["a list"]', '{"k": 3}'])
def test_a_cache_that_cannot_be_read_is_ignored(tmp_path: Path, content: str) -> None:
    cache = tmp_path / "cache" / "helm-versions.json"
    cache.parent.mkdir()
    cache.write_text(content)
    ask = _Ask("v4.3.1")
    assert versions.version_of(_binary(tmp_path), ask, str(cache)) == "v4.3.1" and ask.asked == 1


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    ask = _Ask("v4.3.1")
    assert versions.version_of(_binary(tmp_path), ask, str(blocked / "sub" / "helm-versions.json")) == "v4.3.1"


def test_the_file_keeps_the_latest_binaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "LIMIT", 2)
    binaries: List[str] = [_binary(tmp_path, f"helm{n}") for n in range(3)]
    for binary in binaries:
        versions.version_of(binary, _Ask("v3.22.0"))
    _next_run(monkeypatch)
    first = _Ask("v3.22.0")
    versions.version_of(binaries[0], first)
    last = _Ask("v3.22.0")
    versions.version_of(binaries[2], last)
    assert (first.asked, last.asked) == (1, 0)
