"""The flow playbooks' inputs on the bed: each bad input is one line naming it,
and nothing is written to the cluster; a service that is not there is refused
(or, for remove, left alone) without a ServiceLifecycle made for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import NotFoundError

from support.ansible import PLAIN_TEXT, ROOT

BIN = Path(sys.executable).parent
CHART = str(ROOT / "examples" / "charts" / "keystone")
GROUP = "lifecycle.openstack.org/v1alpha1"


def _playbook(kubeconfig: str, playbook: str, **variables: Any) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"), KUBECONFIG=kubeconfig,
               K8S_AUTH_KUBECONFIG=kubeconfig, **PLAIN_TEXT)
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(ROOT / "examples" / "inventory.yml"),
                           str(ROOT / "playbooks" / playbook), "-e", json.dumps(variables)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def _written(dyn: dynamic.DynamicClient, namespace: str) -> list:
    found = []
    for kind in ("ServiceLifecycle", "Phase"):
        items = dyn.resources.get(api_version=GROUP, kind=kind).get(namespace=namespace).to_dict()["items"]
        found += [f"{kind}/{i['metadata']['name']}" for i in items]
    return found


def _namespace_exists(dyn: dynamic.DynamicClient, name: str) -> bool:
    try:
        dyn.resources.get(api_version="v1", kind="Namespace").get(name=name)
    except NotFoundError:
        return False
    return True


BAD = [
    ("update.yml", {"traffic_backend": "istio"},
     "traffic_backend: got 'istio', expected one of service_selector, ingress_canary, openshift_route, none"),
    ("rollback.yml", {"to_revision": "abc"}, "to_revision: got 'abc', expected a whole number >= 1"),
    ("greenfield.yml", {"phase_timeout": "abc"}, "phase_timeout: got 'abc', expected a whole number >= 1"),
    ("greenfield.yml", {"values": "endpoints:\n  identity: [5000\n"},
     "values: expected YAML text that parses: expected ',' or ']', but got '<stream end>' at line 3, column 1"),
]


@pytest.mark.parametrize("playbook,bad,line", BAD, ids=[next(iter(b)) for p, b, line in BAD])
def test_a_bad_input_is_one_line_naming_it_and_nothing_is_written(
        kubeconfig: str, crds, dyn: dynamic.DynamicClient, playbook: str, bad: dict, line: str) -> None:
    namespace = f"inputs-{uuid.uuid4().hex[:8]}"
    done = _playbook(kubeconfig, playbook, service="keystone", openstack_namespace=namespace, chart=CHART,
                     version="2025.1", **bad)
    assert done.returncode == 2, done.stdout[-2000:]
    fatal = [x for x in done.stdout.splitlines() if x.startswith("fatal:")]
    assert len(fatal) == 1
    (error,) = json.loads(fatal[0].split("=> ", 1)[1])["errors"]
    assert error.startswith(f"{line} (for example -e {next(iter(bad))}=")
    assert f"[ERROR]: Task failed: Action failed: {line}" in done.stdout + done.stderr
    assert "TASK [Check the flow's inputs]" in done.stdout and done.stdout.count("TASK [") == 1
    assert not _namespace_exists(dyn, namespace)


def test_every_bad_input_is_reported_at_once(kubeconfig: str, crds) -> None:
    done = _playbook(kubeconfig, "update.yml", service="keystone", openstack_namespace="inputs-never", chart=CHART,
                     version="2025.1", traffic_backend="istio", to_revision="abc", phase_timeout="abc",
                     values="a: [1")
    (fatal,) = [x for x in done.stdout.splitlines() if x.startswith("fatal:")]
    errors = json.loads(fatal.split("=> ", 1)[1])["errors"]
    assert [e.split(":")[0] for e in errors] == ["values", "phase_timeout", "traffic_backend", "to_revision"]


def test_update_of_a_service_that_is_not_installed_is_one_error_and_writes_nothing(
        kubeconfig: str, crds, dyn: dynamic.DynamicClient, namespace: str) -> None:
    done = _playbook(kubeconfig, "update.yml", service="nothere", openstack_namespace=namespace, chart=CHART,
                     version="2")
    assert done.returncode == 2
    fatal = [x for x in done.stdout.splitlines() if x.startswith("fatal:")]
    assert len(fatal) == 1 and (
        f"update of nothere refused, nothing changed: there is no Helm release nothere in namespace {namespace}"
        in fatal[0])
    assert _written(dyn, namespace) == []


def test_rollback_of_a_service_that_is_not_installed_is_one_error_and_writes_nothing(
        kubeconfig: str, crds, dyn: dynamic.DynamicClient, namespace: str) -> None:
    done = _playbook(kubeconfig, "rollback.yml", service="nothere", openstack_namespace=namespace, chart=CHART)
    assert done.returncode == 2
    fatal = [x for x in done.stdout.splitlines() if x.startswith("fatal:")]
    assert len(fatal) == 1 and "release nothere does not exist" in fatal[0]
    assert _written(dyn, namespace) == []


def test_remove_of_a_service_that_is_not_there_changes_nothing_and_warns_of_no_reserved_name(
        kubeconfig: str, crds, dyn: dynamic.DynamicClient, namespace: str) -> None:
    done = _playbook(kubeconfig, "remove.yml", service="nothere", openstack_namespace=namespace, chart=CHART)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (f"nothere is not deployed in namespace {namespace} (no ServiceLifecycle, no Helm release nothere): "
            "nothing to remove.") in done.stdout
    assert "changed=0" in done.stdout and _written(dyn, namespace) == []
    assert "reserved name" not in done.stdout + done.stderr


def test_namespace_as_older_surveys_set_it_is_still_read_and_warned_about(
        kubeconfig: str, crds, namespace: str) -> None:
    done = _playbook(kubeconfig, "remove.yml", service="nothere", namespace=namespace, chart=CHART)
    assert done.returncode == 0, done.stdout[-2000:]
    assert f"not deployed in namespace {namespace} " in done.stdout
    assert "Found variable using reserved name 'namespace'" in done.stdout + done.stderr
