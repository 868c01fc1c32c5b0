"""plugins/module_utils/connection.py: a kubeconfig option naming no file."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.connection import _missing_kubeconfig


class _Module:
    def __init__(self, params: Dict[str, Any]) -> None:
        self.params = params


@pytest.mark.parametrize("option, env", [(None, None), ("", None), (None, ""), ("", "")])
def test_no_kubeconfig_given_is_not_a_missing_one(option: Any, env: Any, monkeypatch: Any) -> None:
    """A token credential sets K8S_AUTH_KUBECONFIG to nothing: host and api_key connect."""
    if env is None:
        monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)
    else:
        monkeypatch.setenv("K8S_AUTH_KUBECONFIG", env)
    assert _missing_kubeconfig(_Module({"kubeconfig": option})) == ""


def test_a_kubeconfig_naming_no_file_is_said_without_its_path(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)
    missing = str(tmp_path / "nowhere" / "config")
    msg = _missing_kubeconfig(_Module({"kubeconfig": missing}))
    assert msg.startswith("the kubeconfig file given (kubeconfig or K8S_AUTH_KUBECONFIG) does not exist")
    assert missing not in msg
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", missing)
    assert _missing_kubeconfig(_Module({"kubeconfig": None})) == msg
    present = tmp_path / "config"
    present.write_text("apiVersion: v1\n")
    assert _missing_kubeconfig(_Module({"kubeconfig": str(present)})) == ""
