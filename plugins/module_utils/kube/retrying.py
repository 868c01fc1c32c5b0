# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every request a module makes survives a blip, not only those it guards.

transient.retry guards the calls that matter most (status writes, applies,
the wait); but a module makes many more (discovery, the reads before a phase
starts, the Lease, the ServiceLifecycle), and with connections dropped every
few seconds one unguarded call in a hundred is enough to fail a task that
nothing was wrong with. So the client's one funnel for HTTP requests
(kubernetes.client.ApiClient.call_api, which the dynamic client's
every request goes through) tries a request again when it failed
transiently (transient.is_transient), within REQUEST_SECONDS.

Sent again, a request that had landed answers as if it were new: a create
meets 409 (phase_record.create and the Lease recognise their own object), a
delete 404 (gone is what it wanted), a replace 409 on its resourceVersion
(its callers read again). Reads, patches and server-side applies are the
same the second time. A watch's first request is tried again too; a watch
that breaks later is the waiter's to resume.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient

# An apiserver restart takes seconds; a request does not wait for longer.
REQUEST_SECONDS = 30.0


def retrying(dyn: Any) -> Any:
    """The dynamic client `dyn`, its requests tried again through transient failures."""
    api = getattr(dyn, "client", None)
    if api is None or getattr(api, "_lcm_retrying", False):
        return dyn
    send = api.call_api

    def call_api(*args: Any, **kwargs: Any) -> Any:
        return transient.retry(lambda: send(*args, **kwargs), budget=REQUEST_SECONDS)
    api.call_api = call_api
    api._lcm_retrying = True  # pylint: disable=protected-access
    return dyn
