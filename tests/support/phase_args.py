"""The arguments of lcm.openstack.phase for the bed's test chart (svc)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from support import kube

CHART = str(kube.ROOT / "tests" / "integration" / "charts" / "svc")
GROUP = "lifecycle.openstack.org/v1alpha1"


def phase_args(namespace: str, ptype: str = "install", values: Optional[Dict[str, Any]] = None,
               **extra: Any) -> Dict[str, Any]:
    args: Dict[str, Any] = {"type": ptype, "service": "svc", "release": "ks", "namespace": namespace,
                            "target_version": "2025.1", "source": {"chart": CHART}}
    if values is not None:
        args["source"]["values"] = values
    for key, value in extra.items():
        if key == "source":
            args["source"].update(value)
        else:
            args[key] = value
    return args
