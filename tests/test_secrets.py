"""Redaction runs on the scheduler's thread while pytest's main thread edits os.environ."""

from __future__ import annotations

import os
import threading

from pytest_toolselect.providers.secrets import redact


def test_redact_survives_the_environment_changing_under_it() -> None:
    stop = threading.Event()

    def churn() -> None:
        # as pytest does with PYTEST_CURRENT_TEST at every phase of every item
        while not stop.is_set():
            os.environ["TOOLSELECT_CHURN_TOKEN"] = "churn-value-123456"
            os.environ.pop("TOOLSELECT_CHURN_TOKEN", None)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(3000):
            assert redact("no secret here") == "no secret here"
    finally:
        stop.set()
        thread.join()


def test_redact_masks_secret_variables_and_key_shapes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-123456")
    text = redact("token tok-abcdef-123456 and key sk-" + "abcdefghijklmnop")
    assert "tok-abcdef-123456" not in text and "abcdefghijklmnop" not in text
