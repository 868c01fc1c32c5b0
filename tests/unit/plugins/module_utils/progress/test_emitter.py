"""plugins/module_utils/progress/emitter.py: the module's side of the progress channel."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import List

from ansible_collections.lcm.openstack.plugins.module_utils.progress import emitter as progress_emitter
from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import DETAIL, ENV, Emitter, emitter


def test_without_a_channel_it_says_nothing_and_never_fails() -> None:
    quiet = emitter({})
    assert not quiet.active
    quiet.say("svc install wave 1/1: started")
    assert not quiet.active


def test_one_emitter_a_channel_however_many_parts_speak(tmp_path: Path) -> None:
    env = {ENV: str(tmp_path / "s")}
    assert emitter(env) is emitter(env)
    assert emitter(env) is not emitter({})


def _listening(path: str) -> socket.socket:
    """The controller's end of the channel, as a bare listening socket."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    return server


def test_a_line_is_one_json_object_with_its_level_and_whitespace_folded(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    server = _listening(path)
    sender = Emitter(path)
    sender.say("Job a  InProgress:\n0/1 succeeded")
    sender.say("ConfigMap b Current", DETAIL)
    sender.close()
    conn = server.accept()[0]
    data = b""
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    conn.close()
    server.close()
    got: List[dict] = [json.loads(line) for line in data.decode().splitlines()]
    assert got == [{"msg": "Job a InProgress: 0/1 succeeded", "level": 0},
                   {"msg": "ConfigMap b Current", "level": 1}]


def test_a_channel_nobody_listens_on_turns_it_off_without_an_error(tmp_path: Path) -> None:
    sender = Emitter(str(tmp_path / "gone"))
    assert sender.active
    sender.say("svc install: Phase x")
    assert not sender.active
    sender.say("svc install: more")  # no second attempt, no error


def test_a_listener_that_went_away_turns_it_off(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    server = _listening(path)
    sender = Emitter(path)
    sender.say("first")
    conn = server.accept()[0]
    conn.close()
    server.close()
    for number in range(200):  # the peer's close shows as EPIPE on a later send
        sender.say(f"line {number} " + "x" * 1000)
        if not sender.active:
            break
    assert not sender.active
    assert progress_emitter.SEND_TIMEOUT > 0
