# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time as the collection writes and reads it: Kubernetes timestamps (UTC,
whole seconds, `Z`) and durations for people (45s, 1m04s, 1h05m). One place,
so a Phase's startedAt, a flow's summary, the UpdateStatus and the callback's
table agree."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def now_text() -> str:
    """Now, as a status timestamp."""
    return format_time(utcnow())


def parse_time(value: Any) -> Optional[datetime]:
    """A Kubernetes timestamp (or a datetime, as YAML loads an unquoted one) in UTC."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def format_time(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime(TIME_FORMAT)


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
