"""Fixtures of the phase tests: the mariadb chart's backup CronJob as rendered,
on a volume claim and on a hostPath."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from support.db_backup import load


@pytest.fixture
def cronjob() -> Dict[str, Any]:
    return load("mariadb-backup.out", "CronJob")


@pytest.fixture
def hostpath_cronjob() -> Dict[str, Any]:
    return load("mariadb-backup-hostpath.out", "CronJob")
