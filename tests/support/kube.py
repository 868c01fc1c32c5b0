"""Small helpers the integration tests share: clients, namespaces, waiting.

Waiting lists once and then watches from that list's resourceVersion, as the
collection's own waiter does; tests never sleep-and-poll.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from kubernetes import config, dynamic
from kubernetes.client.rest import ApiException
from support import paths

Obj = Dict[str, Any]
ROOT = paths.ROOT


def dynamic_client(kubeconfig: str) -> dynamic.DynamicClient:
    api = config.new_client_from_config(config_file=kubeconfig)
    return dynamic.DynamicClient(api)


def condition(obj: Obj, ctype: str) -> Optional[Obj]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def has_condition(ctype: str, status: str = "True") -> Callable[[Obj], bool]:
    def check(obj: Obj) -> bool:
        c = condition(obj, ctype)
        return bool(c) and c.get("status") == status
    check.__name__ = f"{ctype}={status}"
    return check


def wait_for(
    dyn: dynamic.DynamicClient,
    api_version: str,
    kind: str,
    name: str,
    namespace: Optional[str],
    predicate: Callable[[Obj], bool],
    timeout: float = 60,
) -> Obj:
    """Return the object once ``predicate`` holds; raise TimeoutError with its last state."""
    res = dyn.resources.get(api_version=api_version, kind=kind)
    deadline = time.monotonic() + timeout
    selector = f"metadata.name={name}"
    last: Optional[Obj] = None
    while True:
        listed = res.get(namespace=namespace, field_selector=selector).to_dict()
        for item in listed.get("items", []):
            last = item
            if predicate(item):
                return item
        rv = listed["metadata"]["resourceVersion"]
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"{kind} {namespace}/{name} did not reach "
                        f"{getattr(predicate, '__name__', 'the wanted state')} in {timeout}s; "
                        f"last status: {(last or {}).get('status')}"
                    )
                for event in res.watch(namespace=namespace, field_selector=selector,
                                       resource_version=rv, timeout=max(1, int(remaining))):
                    obj = event["raw_object"]
                    if event["type"] == "ERROR":
                        raise ApiException(status=obj.get("code", 500), reason=obj.get("message"))
                    rv = obj["metadata"]["resourceVersion"]
                    if event["type"] == "DELETED":
                        continue
                    last = obj
                    if predicate(obj):
                        return obj
        except ApiException as exc:
            if exc.status != 410:  # expired resourceVersion: list again
                raise


def yaml_file(path: Path) -> Any:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def get_or_none(dyn: dynamic.DynamicClient, api_version: str, kind: str, name: str,
                namespace: Optional[str]) -> Optional[Obj]:
    """The object as a dict, or None when it does not exist."""
    try:
        return dyn.resources.get(api_version=api_version, kind=kind).get(
            name=name, namespace=namespace).to_dict()
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def wait_for_gone(dyn: dynamic.DynamicClient, api_version: str, kind: str, namespace: Optional[str],
                  selector: str, timeout: float = 120) -> None:
    """Return once no object matches the label selector (watching deletions)."""
    res = dyn.resources.get(api_version=api_version, kind=kind)
    deadline = time.monotonic() + timeout
    while True:
        listed = res.get(namespace=namespace, label_selector=selector).to_dict()
        left = {i["metadata"]["name"] for i in listed.get("items", [])}
        if not left:
            return
        rv = listed["metadata"]["resourceVersion"]
        try:
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{kind} {', '.join(sorted(left))} still there after {timeout}s")
                for event in res.watch(namespace=namespace, label_selector=selector,
                                       resource_version=rv, timeout=max(1, int(remaining))):
                    obj = event["raw_object"]
                    if event["type"] == "ERROR":
                        raise ApiException(status=obj.get("code", 500), reason=obj.get("message"))
                    if event["type"] == "DELETED":
                        left.discard(obj["metadata"]["name"])
                        if not left:
                            return
            return
        except ApiException as exc:
            if exc.status != 410:
                raise
