"""Where the tests find the checkout and the unit tests' shared fixtures."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT_FIXTURES = ROOT / "tests" / "unit" / "fixtures"
