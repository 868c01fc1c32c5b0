"""tests/support/endpoint_watch.py on the bed: a Deployment behind a Service
scaled to 0 and back, seen as one span without a ready endpoint between
two with them, while a second Service's line stays as it was."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from kubernetes import dynamic

from support import kube
from support.endpoint_watch import EndpointWatch

pytestmark = pytest.mark.bed


def _deployment(name: str, replicas: int) -> Dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "api", "image": "registry.invalid/api:1",
                                                           "ports": [{"containerPort": 8080}]}]}}}}


def _service(name: str) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def _scale(dyn: dynamic.DynamicClient, namespace: str, name: str, replicas: int) -> None:
    dyn.resources.get(api_version="apps/v1", kind="Deployment").patch(
        name=name, namespace=namespace, body={"spec": {"replicas": replicas}},
        content_type="application/merge-patch+json")


def test_a_scale_to_zero_and_back_is_one_zero_span(dyn: dynamic.DynamicClient, namespace: str) -> None:
    for name, replicas in (("keystone-api", 2), ("nova-api", 1)):
        for body in (_deployment(name, replicas), _service(name)):
            dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"]).create(body=body, namespace=namespace)
    for name in ("keystone-api", "nova-api"):
        kube.wait_for(dyn, "apps/v1", "Deployment", name, namespace, kube.has_condition("Available"), timeout=120)
    # The EndpointSlice controller follows the pods a moment after the
    # Deployment counts them available (a loaded machine once listed one of
    # keystone-api's two): the measured watch starts once every endpoint is ready.
    with EndpointWatch(dyn, namespace, ["keystone-api", "nova-api"]) as settling:
        settling.wait_until("keystone-api", lambda n: n == 2, timeout=60)
        settling.wait_until("nova-api", lambda n: n == 1, timeout=60)
    with EndpointWatch(dyn, namespace, ["keystone-api", "nova-api"]) as watch:
        watch.wait_until("keystone-api", lambda n: n == 2, timeout=60)
        watch.wait_until("nova-api", lambda n: n == 1, timeout=60)
        _scale(dyn, namespace, "keystone-api", 0)
        watch.wait_until("keystone-api", lambda n: n == 0, timeout=60)
        _scale(dyn, namespace, "keystone-api", 2)
        watch.wait_until("keystone-api", lambda n: n == 2, timeout=120)
    line = [s.ready for s in watch.timeline("keystone-api")]
    assert line[0] == 2 and line[-1] == 2 and watch.min_ready("keystone-api") == 0, line
    (span,) = watch.zero_spans("keystone-api")
    zero = next(s for s in watch.timeline("keystone-api") if s.ready == 0)
    back = next(s for s in watch.timeline("keystone-api") if s.monotonic > zero.monotonic and s.ready > 0)
    assert span == (zero.monotonic, back.monotonic) and span[1] > span[0]
    assert [s.ready for s in watch.timeline("nova-api")] == [1] and watch.zero_spans("nova-api") == []
