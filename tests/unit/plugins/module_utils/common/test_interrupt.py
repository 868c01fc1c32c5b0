"""interrupt.stopped_by_signal: SIGTERM and SIGINT become Interrupted inside
the block, once; the handlers before it are back after it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.interrupt import Interrupted, stopped_by_signal


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_inside_the_block_raises_interrupted_naming_it(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    with pytest.raises(Interrupted) as caught:
        with stopped_by_signal():
            os.kill(os.getpid(), sig)
    assert caught.value.signal == sig.name
    assert not isinstance(caught.value, Exception)  # `except Exception` cannot swallow it
    assert signal.getsignal(sig) is before


def test_the_first_signal_puts_the_handlers_back_so_a_second_one_is_not_caught() -> None:
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: seen.append(signum))
    try:
        with pytest.raises(Interrupted):
            with stopped_by_signal():
                os.kill(os.getpid(), signal.SIGTERM)
        with stopped_by_signal():
            pass
        os.kill(os.getpid(), signal.SIGTERM)  # outside: the handler from before gets it
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [signal.SIGTERM]


def test_outside_the_main_thread_the_block_runs_as_it_is() -> None:
    outcome = []

    def body() -> None:
        with stopped_by_signal():
            outcome.append(signal.getsignal(signal.SIGTERM))
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert outcome == [signal.getsignal(signal.SIGTERM)]
