"""What the module adapters use of an AnsibleModule, recording how the task
ended: exit_json and fail_json raise Ended, which holds the result."""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any, Dict, List


class Ended(Exception):
    def __init__(self, failed: bool, result: Dict[str, Any]) -> None:
        super().__init__(result.get("msg", ""))
        self.failed, self.result = failed, result


class FakeModule:
    def __init__(self, module: ModuleType, check_mode: bool = False, diff: bool = False, **given: Any) -> None:
        """The parameters as Ansible hands them to the module: every option of
        `module`'s argument spec, its default or None, then those `given`;
        `diff`, run with --diff."""
        self.params: Dict[str, Any] = {name: option.get("default") for name, option in module.argument_spec().items()}
        self.params.update(given)
        self.check_mode, self._diff = check_mode, diff
        self.no_log_values: set = set()
        self.env_update: Dict[str, str] = {}
        self.warnings: List[str] = []

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def exit_json(self, **result: Any) -> None:
        raise Ended(False, dict(result, invocation=copy.deepcopy(self.params)))

    def fail_json(self, **result: Any) -> None:
        raise Ended(True, dict(result, invocation=copy.deepcopy(self.params)))


def ended(run: Any, module: FakeModule) -> Ended:
    """How `run(module)` ended."""
    try:
        run(module)
    except Ended as end:
        return end
    raise AssertionError("the adapter returned without exit_json or fail_json")
