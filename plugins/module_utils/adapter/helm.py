# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm CLI for the Helm modules, with kubernetes.core's connection
environment (HELM_KUBE*, KUBECONFIG from the auth options), and its redactor."""

from __future__ import annotations

import os
from typing import Any, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import mask_release_params
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, find_helm
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import DEFAULT_SECRET_KEYS, Redactor


def helm_cli(module: Any) -> Tuple[Helm, Redactor]:
    p = module.params
    redactor = Redactor(key_pattern=p.get("secret_key_pattern") or DEFAULT_SECRET_KEYS)
    redactor.add_values(p.get("secret_values") or {}, under_secret_key=True)
    redactor.add_values(p.get("values") or {})
    try:
        binary = find_helm(p.get("binary_path"), os.environ)
    except LcmError as exc:
        mask_release_params(p, redactor)
        module.fail_json(msg=str(exc))
    # kubernetes.core builds the HELM_KUBE* / KUBECONFIG environment from the
    # auth options; it asks the binary for its version when ca_cert is set.
    p["binary_path"] = binary
    return Helm(binary, env=dict(module.env_update), redactor=redactor), redactor
