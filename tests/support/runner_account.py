"""The account the flows run as in the tests: a ServiceAccount holding what
docs/rbac.md grants, and nothing more, with the environment AWX's Kubernetes
bearer-token credential injects (K8S_AUTH_HOST, K8S_AUTH_API_KEY,
K8S_AUTH_SSL_CA_CERT).

The setup is read from the docs, not written again here: the `console` block
under "A runner for one namespace" in docs/rbac.md is run command by command
with the namespace `openstack` replaced by the test's. A change to the docs is
a change to what the tests grant.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from typing import Any, Dict, List

import yaml

from support import bed

DOC = bed.ROOT / "docs" / "rbac.md"
HEADING = "## A runner for one namespace"
ACCOUNT = "lcm-runner"
# `openstack` as a namespace or at the start of a name, never inside lcm-openstack-*.
_NAMESPACE = re.compile(r"(?<![-.\w])openstack\b")


def documented_commands(namespace: str) -> List[List[str]]:
    """The documented kubectl commands for `namespace`, minus `create token`
    (the test asks for a short-lived token through the API)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    block = section[section.index("```console") + len("```console"):]
    block = block[:block.index("```")]
    commands = []
    for line in block.strip().splitlines():
        argv = shlex.split(_NAMESPACE.sub(namespace, line))
        assert argv[0] == "kubectl", f"docs/rbac.md: not a kubectl command: {line}"
        if argv[1:3] != ["create", "token"]:
            commands.append(argv[1:])
    return commands


def grant_documented(kubeconfig: str, namespace: str) -> None:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    for argv in documented_commands(namespace):
        subprocess.run([bed.kubectl_bin(), *argv], env=env, check=True, capture_output=True, text=True)


def credential_env(dyn: Any, kubeconfig: str, namespace: str, account: str = ACCOUNT) -> Dict[str, str]:
    """The K8S_AUTH_* environment of a token of `account`, with no kubeconfig."""
    from kubernetes import client as kclient

    token = kclient.CoreV1Api(dyn.client).create_namespaced_service_account_token(
        account, namespace, {"spec": {"expirationSeconds": 7200}}).status.token
    with open(kubeconfig, encoding="utf-8") as handle:
        cluster = yaml.safe_load(handle)["clusters"][0]["cluster"]
    return {"KUBECONFIG": "", "K8S_AUTH_KUBECONFIG": "", "K8S_AUTH_HOST": cluster["server"],
            "K8S_AUTH_API_KEY": token, "K8S_AUTH_VERIFY_SSL": "true",
            "K8S_AUTH_SSL_CA_CERT": cluster["certificate-authority"]}
