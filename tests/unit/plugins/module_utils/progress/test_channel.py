"""plugins/module_utils/progress/channel.py: the controller's side of the progress channel,
with the module's side (emitter.py) in this process and in a child process."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from typing import List, Tuple

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.progress.channel import Channel, parse
from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import DETAIL, ENV, Emitter

Shown = List[Tuple[str, int]]


def recorder() -> Tuple[Shown, threading.Event, object]:
    shown: Shown = []
    first = threading.Event()

    def show(text: str, level: int) -> None:
        shown.append((text, level))
        first.set()
    return shown, first, show


def test_lines_arrive_while_the_block_runs_in_order_and_all_before_it_ends() -> None:
    shown, first, show = recorder()
    with Channel(show) as path:
        sender = Emitter(path)
        sender.say("svc install wave 1/2: started: Job a")
        assert first.wait(30), "the first line was not shown while the module ran"
        assert shown == [("svc install wave 1/2: started: Job a", 0)]
        for number in range(50):
            sender.say(f"svc install wave 2/2: Job a InProgress: step {number}")
        sender.say("svc install wave 2/2: Secret b Current", DETAIL)
        sender.close()
    assert shown[1:] == [(f"svc install wave 2/2: Job a InProgress: step {n}", 0) for n in range(50)] + \
        [("svc install wave 2/2: Secret b Current", 1)]


def test_the_socket_lives_in_a_private_directory_removed_at_the_end() -> None:
    with Channel(lambda text, level: None) as path:
        directory = os.path.dirname(path)
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        assert stat.S_ISSOCK(os.stat(path).st_mode)
    assert not os.path.exists(directory)


def test_a_module_process_finds_the_channel_in_its_environment() -> None:
    shown, _first, show = recorder()
    code = ("from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import emitter\n"
            "e = emitter()\n"
            "for n in range(3):\n"
            "    e.say(f'svc upgrade wave 1/1: Job s InProgress: {n}')\n")
    with Channel(show) as path:
        env = dict(os.environ, **{ENV: path}, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert shown == [(f"svc upgrade wave 1/1: Job s InProgress: {n}", 0) for n in range(3)]


def test_a_last_line_without_newline_is_shown_and_garbage_is_not() -> None:
    shown, _first, show = recorder()
    with Channel(show) as path:
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(path)
        raw.sendall(b'not json\n{"msg": 3}\n["a"]\n{"msg": "kept", "level": 1}\n{"msg": "last"}')
        raw.close()
    assert shown == [("kept", 1), ("last", 0)]


def test_a_connection_left_open_by_a_process_the_module_left_does_not_hold_the_end() -> None:
    shown, first, show = recorder()
    channel = Channel(show)
    path = channel.__enter__()
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.connect(path)
    held.sendall(b'{"msg": "said before the module ended"}\n')
    assert first.wait(30)
    reader = channel._thread
    channel.close()  # the connection is still open: what it said is shown, the reader stops
    assert reader is not None and not reader.is_alive()
    assert shown == [("said before the module ended", 0)]
    held.close()


@pytest.mark.parametrize("raw, expected", [
    (b'{"msg": "a", "level": 1}', {"msg": "a", "level": 1}),
    (b'{"msg": "a", "level": "high"}', {"msg": "a", "level": 0}),
    (b'{"level": 1}', None),
    (b"\xff\xfe", None),
])
def test_parse(raw: bytes, expected: object) -> None:
    assert parse(raw) == expected
