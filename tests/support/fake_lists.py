"""A listed resource that answers from a script, page by page, for the unit tests of paged lists."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from kubernetes.dynamic.exceptions import DynamicApiError

from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

Key = Tuple[Optional[str], Optional[str]]  # (namespace, continue token) of a request


class Page:
    def __init__(self, items: List[Dict[str, Any]], token: Optional[str]) -> None:
        self.items, self.token = items, token

    def to_dict(self) -> Dict[str, Any]:
        return {"metadata": {"continue": self.token} if self.token else {}, "items": self.items}


class ScriptedList:
    """A resource answering each (namespace, continue token) from a script:
    (items, next token), or an error; an answer given as a list is used up
    one request at a time."""

    name = "pods"

    def __init__(self, script: Dict[Key, Any]) -> None:
        self.script = script
        self.requests: List[Dict[str, Any]] = []

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None,
            limit: Optional[int] = None, _continue: Optional[str] = None, serializer: Any = None) -> Page:
        assert serializer is plain  # parsed JSON, not a ResourceInstance built field by field
        self.requests.append({"namespace": namespace, "selector": label_selector, "limit": limit,
                              "continue": _continue})
        answer: Union[DynamicApiError, Tuple[List[Dict[str, Any]], Optional[str]]] = self.script[namespace, _continue]
        if isinstance(answer, list):
            answer = answer.pop(0)
        if isinstance(answer, DynamicApiError):
            raise answer
        items, token = answer
        return Page([dict(i) for i in items], token)


class JobLists:
    """The Jobs of a namespace, listed: each list answers the next of `lists`
    (whole list responses), as a watch's initial list and its re-lists read them."""

    kind, group_version, name = "Job", "batch/v1", "jobs"

    def __init__(self, lists: List[Dict[str, Any]]) -> None:
        self.lists = list(lists)

    def get(self, **_kwargs: Any) -> "Listed":
        return Listed(self.lists.pop(0))


class Listed:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data
