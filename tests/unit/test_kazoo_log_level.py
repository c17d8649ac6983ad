"""Kazoo's INFO records reach a test's log capture: no earlier test in the process left ``kazoo`` at a higher
level (a broker's `configure_logging` sets WARNING; the conftest's `_no_logger_level_left` guard catches a test
that leaves it so)."""

from __future__ import annotations

import logging

import pytest


def test_kazoo_info_records_reach_the_capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    logging.getLogger("kazoo.client").info("Connecting to 127.0.0.1(127.0.0.1):2181, use_ssl: False")
    assert [r.getMessage() for r in caplog.records if r.name == "kazoo.client"] == [
        "Connecting to 127.0.0.1(127.0.0.1):2181, use_ssl: False"]
