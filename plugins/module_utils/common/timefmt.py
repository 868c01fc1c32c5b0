# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time as the collection writes and reads it: Kubernetes timestamps (UTC,
whole seconds, `Z`), MicroTimes where order within a second matters, and
durations for people (45s, 1m04s, 1h05m). One place, so a Phase's startedAt,
a flow's summary, the UpdateStatus and the callback's table agree."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional, Tuple

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# A MicroTime, as the apiserver writes a Lease's renewTime or an Event's
# eventTime. A Phase's start and end are written so: two Phases of one service
# can start within the same second, and "oldest first" must still be right.
MICRO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
# A fraction of a second of any length (Go's RFC3339Nano drops trailing zeros
# and may carry nine digits); fromisoformat takes at most six.
_FRACTION = re.compile(r"\.(\d+)")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def now_text() -> str:
    """Now, as a status timestamp."""
    return format_time(utcnow())


def now_micro() -> str:
    """Now, as a MicroTime."""
    return format_micro(utcnow())


def parse_time(value: Any) -> Optional[datetime]:
    """A Kubernetes timestamp (or a datetime, as YAML loads an unquoted one) in UTC."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "00000")[:6], text, count=1)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def started_order(obj: Mapping[str, Any]) -> Tuple[datetime, str]:
    """Sort key, oldest first: when the object (a Phase) started, or else was
    created, as times rather than text (a MicroTime and a whole-second time
    do not sort right as strings); then its name. None of either sorts first."""
    status, meta = obj.get("status") or {}, obj.get("metadata") or {}
    when = parse_time(status.get("startedAt")) or parse_time(meta.get("creationTimestamp"))
    return (when or datetime.min.replace(tzinfo=timezone.utc), str(meta.get("name") or ""))


def format_time(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime(TIME_FORMAT)


def format_micro(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime(MICRO_FORMAT)


def epoch(value: Any) -> Optional[datetime]:
    """Seconds since the epoch (Helm's modifiedAt label) as a datetime."""
    try:
        return datetime.fromtimestamp(int(str(value)), timezone.utc)
    except (TypeError, ValueError, OverflowError):
        return None


def seconds(delta: timedelta) -> float:
    return delta.total_seconds()


def seconds_between(started: Any, completed: Any) -> Optional[int]:
    """Whole seconds from one timestamp to another; None when either is missing."""
    start, end = parse_time(started), parse_time(completed)
    return int(seconds(end - start)) if start is not None and end is not None else None


def duration(total: float) -> str:
    """45s, 1m04s, 1h05m, 2d03h: the largest unit and the next one."""
    total = max(0, int(total))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def duration_or_dash(total: Any) -> str:
    """duration(), or - when the number is unknown."""
    if total is None or isinstance(total, bool):
        return "-"
    try:
        return duration(float(total))
    except (TypeError, ValueError):
        return "-"
