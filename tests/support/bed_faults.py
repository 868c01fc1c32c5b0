"""Make a Job or a bare pod of a namespace fail on the bed, chart unchanged.

bedlet reads the ConfigMap ``bed-faults`` of the pod's namespace: a key names
a Job (its pods' job-name label) or a bare pod, its value is the termination
message the pod's containers fail with (exit 1), or `exit <code>: <message>`
(`exit 0` succeeds), one outcome per line for the key's successive pods. A pod created after the key is set
fails; a pod created after it is cleared does not; a pod already told to fail
keeps failing, as with a broken image. See docs/test-bed.md.
"""

from __future__ import annotations

from kubernetes import dynamic
from kubernetes.client.rest import ApiException

CONFIGMAP = "bed-faults"
MERGE = "application/merge-patch+json"


def set_fault(dyn: dynamic.DynamicClient, namespace: str, name: str, message: str) -> None:
    """From now on, new pods of Job (or bare pod) ``name`` fail with ``message``."""
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    try:
        cms.patch(name=CONFIGMAP, namespace=namespace, body={"data": {name: message}},
                  content_type=MERGE)
    except ApiException as e:
        if e.status != 404:
            raise
        cms.create(namespace=namespace, body={
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIGMAP}, "data": {name: message}})


def clear_fault(dyn: dynamic.DynamicClient, namespace: str, name: str) -> None:
    """New pods of ``name`` run normally again; nothing to do when none was set."""
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    try:
        cms.patch(name=CONFIGMAP, namespace=namespace, body={"data": {name: None}},
                  content_type=MERGE)
    except ApiException as e:
        if e.status != 404:
            raise
