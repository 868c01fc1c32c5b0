"""The mariadb chart's backup CronJob and scripts ConfigMap, as rendered, for
the tests of phase/backup_cronjob.py and phase/db_backup.py."""

from __future__ import annotations

from typing import Any, Dict

import yaml

from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "db_backup"


def load(name: str, kind: str) -> Dict[str, Any]:
    """The first object of `kind` in the fixture file `name`."""
    return next(d for d in yaml.safe_load_all((FIXTURES / name).read_text()) if d and d["kind"] == kind)
