"""plugins/module_utils/adapter/helm_release.py: the module's parameters
become the release request; secret values merge over values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm_release import release_request
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseRequest
from ansible_collections.lcm.openstack.plugins.modules import helm_release as module


def _params(**given: Any) -> Dict[str, Any]:
    params = {name: option.get("default") for name, option in module.argument_spec().items()}
    params.update(name="keystone", namespace="openstack", chart="/srv/keystone")
    params.update(given)
    return params


def test_the_specs_defaults_are_the_requests_defaults() -> None:
    """Every default the module documents is the one the engine would take:
    the request is the same whether Ansible filled them in or not."""
    req = release_request(_params())
    assert req == ReleaseRequest(name="keystone", namespace="openstack", chart="/srv/keystone",
                                 values={}, values_files=[], set_values=[])


def test_values_given_are_kept_and_secret_values_merged_over_values() -> None:
    req = release_request(_params(timeout=0, wait=False, server_side=False, history_max=3,
                                  values={"conf": {"keystone": {"DEFAULT": {"debug": True}}}},
                                  secret_values={"endpoints": {"identity": {"auth": {"admin": {"password": "s3cr3t"}}}},
                                                 "conf": {"keystone": {"DEFAULT": {"debug": False}}}}))
    assert (req.timeout, req.wait, req.server_side, req.history_max) == (0, False, False, 3)
    assert req.values == {"conf": {"keystone": {"DEFAULT": {"debug": False}}},
                          "endpoints": {"identity": {"auth": {"admin": {"password": "s3cr3t"}}}}}


RUN_NOOP = """
import json, sys
from pathlib import Path
from support.fake_helm import fake_helm
from support.fake_module import FakeModule, ended
from ansible_collections.lcm.openstack.plugins.modules import helm_release as module
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm_release import run_helm_release

tmp = Path(sys.argv[1])
(tmp / "chart").mkdir()
(tmp / "chart" / "Chart.yaml").write_text("apiVersion: v2\\nname: svc\\nversion: 0.1.0\\n")
helm = fake_helm(tmp, "v3.22.0", [{"revision": 1, "status": "deployed", "chart": "svc-0.1.0"}])
end = ended(run_helm_release, FakeModule(module, name="svc", namespace="ns", chart=str(tmp / "chart"),
                                         binary_path=str(helm)))
print(json.dumps({"failed": end.failed, "result": end.result, "kubernetes": sorted(
    name for name in sys.modules if name == "kubernetes" or name.startswith("kubernetes.")),
    "network": sorted(name for name in ("urllib3", "http.client", "ssl") if name in sys.modules)}))
"""


def test_a_release_found_as_asked_is_decided_without_loading_the_kubernetes_client(tmp_path: Path) -> None:
    """The client's import is most of a no-op's run (common/compat.py): the
    module, run in a process of its own, decides with Helm alone and makes
    no client, nor loads urllib3, http.client or ssl; the kubeconfig is
    never read (there is none here)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), KUBECONFIG=str(tmp_path / "none"))
    run = subprocess.run([sys.executable, "-c", RUN_NOOP, str(tmp_path)], capture_output=True, text=True, env=env,
                         check=True)
    out = json.loads(run.stdout.splitlines()[-1])
    assert (out["failed"], out["result"]["changed"], out["result"]["operation"]) == (False, False, "none")
    assert out["kubernetes"] == []
    # Nor the modules of a connection to the apiserver (common/transient.py sorts failures without them).
    assert out["network"] == []
