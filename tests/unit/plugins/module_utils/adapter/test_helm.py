"""plugins/module_utils/adapter/helm.py: the Helm binary found once and
written back to the parameters, its environment kubernetes.core's, the
redactor knowing the values; a binary not found fails with the values masked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm import helm_cli
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK
from ansible_collections.lcm.openstack.plugins.modules import helm_release as module
from support.fake_module import FakeModule, ended

VALUES = {"endpoints": {"oslo_db": {"auth": {"keystone": {"password": "a-long-db-passw0rd"}}}}}


@pytest.fixture
def helm_bin(tmp_path: Path) -> str:
    path = tmp_path / "helm"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_the_binary_is_found_and_written_back(helm_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_BIN", helm_bin)
    fake = FakeModule(module, name="keystone", namespace="openstack", values=VALUES)
    fake.env_update = {"HELM_KUBECONTEXT": "bed"}
    helm, redactor = helm_cli(fake)
    assert fake.params["binary_path"] == helm_bin == helm.binary
    assert helm.env == {"HELM_KUBECONTEXT": "bed"}
    assert redactor.redact("connecting with a-long-db-passw0rd") == f"connecting with {MASK}"


def test_a_binary_not_found_fails_naming_the_option_with_the_values_masked(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HELM_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not os.path.exists(tmp_path / "helm")
    end = ended(helm_cli, FakeModule(module, name="keystone", namespace="openstack", values=VALUES))
    assert end.failed and "set the binary_path option (alias helm_binary) or the HELM_BIN" in end.result["msg"]
    assert end.result["invocation"]["values"]["endpoints"]["oslo_db"]["auth"]["keystone"]["password"] == MASK
