"""A service that takes no traffic through the flows: the stock openvswitch
chart, a DaemonSet on the nodes with no Service, deployed and removed by the
shipped greenfield and remove playbooks as an operator runs them, with no
traffic input. Its install and test run; the traffic steps find that the
release renders no Service and are skipped, each recorded on the flow with
its reason, and the flows end Operational and Removed. Then the same with
`traffic_backend: none`, where the flows leave the traffic steps out from
their start.

Each flow is one `ansible-playbook` run as the account docs/rbac.md sets up
for one namespace (support/runner_account.py reads the commands from the
docs): the traffic module reads the deployed release with that account.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from kubernetes import dynamic

from support import kube, openstack_helm, runner_account
from support.ansible import ROOT

pytestmark = pytest.mark.bed

GROUP = "lifecycle.openstack.org/v1alpha1"
BIN = Path(sys.executable).parent
SERVICE = "openvswitch"
NOTHING = "release openvswitch renders no Service: nothing to route"


class Namespace:
    """One namespace with the documented runner account, and the flows run in it."""

    def __init__(self, kubeconfig: str, dyn: dynamic.DynamicClient, name: str) -> None:
        self.kubeconfig, self.dyn, self.name = kubeconfig, dyn, name
        runner_account.grant_documented(kubeconfig, name)
        self.credential = runner_account.credential_env(dyn, kubeconfig, name)

    def flow(self, playbook: str, **extra: Any) -> subprocess.CompletedProcess:
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", HELM_BIN=openstack_helm.helm_bin(),
                   ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
        env.update(self.credential)
        env.pop("KUBECONFIG")  # the runner has its token, not the administrator's kubeconfig
        variables = {"service": SERVICE, "openstack_namespace": self.name, "chart": str(openstack_helm.chart(SERVICE)),
                     "phase_timeout": 300}
        variables.update(extra)
        cmd = [str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
               str(ROOT / "playbooks" / playbook), "-e", json.dumps(variables)]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
        return run

    def record(self) -> Dict[str, Any]:
        found = kube.get_or_none(self.dyn, GROUP, "ServiceLifecycle", SERVICE, self.name) or {}
        return found.get("status") or {}

    def phase_types(self) -> List[str]:
        phases = self.dyn.resources.get(api_version=GROUP, kind="Phase").get(
            namespace=self.name, label_selector=f"lifecycle.openstack.org/service={SERVICE}").to_dict()["items"]
        return [p["spec"]["type"] for p in phases]

    def daemonsets(self) -> List[str]:
        found = self.dyn.resources.get(api_version="apps/v1", kind="DaemonSet").get(namespace=self.name).to_dict()
        return [d["metadata"]["name"] for d in found["items"]]


@pytest.fixture(scope="module")
def agents(kubeconfig: str, dyn: dynamic.DynamicClient, crds: None) -> Iterator[Namespace]:
    name = f"ovs-{uuid.uuid4().hex[:6]}"
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    kube.wait_for(dyn, "v1", "ServiceAccount", "default", name, lambda _: True, timeout=30)
    yield Namespace(kubeconfig, dyn, name)
    namespaces.delete(name=name)
    dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="ClusterRoleBinding").delete(
        name=f"{name}-{runner_account.ACCOUNT}")


def test_greenfield_of_a_node_agent_skips_the_rollout_and_ends_operational(agents: Namespace) -> None:
    run = agents.flow("greenfield.yml", version="2025.1")

    record = agents.record()
    assert (record["state"], record["flow"]["name"], record["flow"]["state"]) == (
        "Operational", "greenfield", "Succeeded")
    assert record["flow"]["skipped"] == [{"phase": "trafficrollout", "reason": NOTHING, "after": 2}]
    assert sorted(agents.phase_types()) == ["install", "test"]  # no traffic Phase
    assert agents.daemonsets() == [SERVICE]
    # The summary: a Skipped row after install and test, and why.
    rows = [line.strip(' ",').lstrip('-').split() for line in run.stdout.splitlines()]  # JSON or YAML lines
    rows = [r for r in rows if len(r) == 4 and r[0] in ("install", "test", "trafficrollout")]
    assert [r[:2] for r in rows] == [["install", "Succeeded"], ["test", "Succeeded"],
                                     ["trafficrollout", "Skipped"]], run.stdout[-3000:]
    assert rows[2][2:] == ["-", "-"]
    assert f"trafficrollout skipped: {NOTHING}" in run.stdout


def test_remove_of_a_node_agent_skips_the_drain_and_ends_removed(agents: Namespace) -> None:
    run = agents.flow("remove.yml")

    record = agents.record()
    assert (record["state"], record["flow"]["name"], record["flow"]["state"]) == ("Removed", "remove", "Succeeded")
    assert record["flow"]["skipped"] == [{"phase": "trafficdrain", "reason": NOTHING, "after": 0}]
    assert "trafficdrain" not in agents.phase_types()
    assert agents.daemonsets() == []
    assert f"trafficdrain skipped: {NOTHING}" in run.stdout


def test_traffic_backend_none_leaves_the_traffic_steps_out_from_the_start(agents: Namespace) -> None:
    run = agents.flow("greenfield.yml", version="2025.2", traffic_backend="none")
    flow = agents.record()["flow"]
    ended = (agents.record()["state"], flow["state"], flow["planned"])
    assert ended == ("Operational", "Succeeded", ["install", "test"])
    assert flow["skipped"] == [{"phase": "trafficrollout", "reason": "traffic_backend none", "after": 2}]
    assert "trafficrollout skipped: traffic_backend none" in run.stdout
    # The rollout was left out; service_lifecycle ended the flow.
    assert "TASK [End the flow without traffic; the service is Operational] ***" in run.stdout
    assert "Roll out the traffic - openvswitch" not in run.stdout

    run = agents.flow("remove.yml", traffic_backend="none")
    flow = agents.record()["flow"]
    assert (agents.record()["state"], flow["planned"]) == ("Removed", ["uninstall"])
    assert flow["skipped"] == [{"phase": "trafficdrain", "reason": "traffic_backend none", "after": 0}]
    assert "trafficdrain skipped: traffic_backend none" in run.stdout
