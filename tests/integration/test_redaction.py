"""A password inside a connection URL, under a key that does not name a
credential (openstack-helm's conf.<service>.database.connection), appears
nowhere in what the modules print with -vvv and --diff: the invocation, the
diff, Helm's command and output, the returned values, the Phase."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from kubernetes import dynamic

from support.ansible import run_module
from support.phase_args import GROUP, phase_args

pytestmark = pytest.mark.bed

PASSWORD = "Url-Pw-4c1d-not-a-key"  # pylint: disable=invalid-name
CONNECTION = f"mysql+pymysql://keystone:{PASSWORD}@mariadb.openstack.svc:3306/keystone"
VALUES: Dict[str, Any] = {"conf": {"keystone": {"database": {"connection": CONNECTION}}},
                          "jobs": {"db_sync": {"duration": "0s"}}}


def _clean(result: Dict[str, Any]) -> None:
    assert PASSWORD not in result["_raw"], result["_raw"][result["_raw"].find(PASSWORD) - 300:][:600]


def test_no_module_prints_the_password_of_a_connection_url(
        dyn: dynamic.DynamicClient, kubeconfig: str, crds: None, namespace: str) -> None:
    args = {"name": "ks", "namespace": namespace, "chart": phase_args(namespace)["source"]["chart"],
            "values": VALUES, "wait": False}
    would = run_module("helm_release", args, kubeconfig, check=True, diff=True, verbosity=3)
    assert would.get("failed") is None, would.get("msg")
    _clean(would)
    done = run_module("helm_release", args, kubeconfig, diff=True, verbosity=3)
    assert done.get("failed") is None and done["changed"] is True, done.get("msg")
    _clean(done)
    info = run_module("helm_release_info", {"name": "ks", "namespace": namespace, "get_all_values": True},
                      kubeconfig, verbosity=3)
    _clean(info)
    # The values really went to Helm: the mask is in what is shown, not in the release.
    assert "mysql+pymysql://keystone:********@" in info["_raw"]

    phase = run_module("phase", phase_args(namespace, values=VALUES), kubeconfig, diff=True, verbosity=3)
    assert phase.get("failed") is None, phase.get("msg")
    _clean(phase)
    live = dyn.resources.get(api_version=GROUP, kind="Phase").get(
        name=phase["phase"]["name"], namespace=namespace).to_dict()
    assert PASSWORD not in str(live)
