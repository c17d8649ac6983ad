"""A broker process writes Kafka's layout to its log: ``WARN``, not Python's ``WARNING`` (Kafka's log4j level
names), in ``[time] LEVEL message (logger)``."""

from __future__ import annotations

import logging
import re

import pytest

from zkcontroller.cluster import broker_process


@pytest.mark.usefixtures("restored_logging")  # configure_logging's root handler, root level and kazoo's WARNING
def test_a_broker_process_logs_warn_as_kafka_does(capsys: pytest.CaptureFixture[str]) -> None:
    broker_process.configure_logging()
    logging.getLogger("kafka.server.ReplicaFetcherThread").warning("Reset fetch offset")
    for handler in logging.getLogger().handlers:
        handler.flush()
    err = capsys.readouterr().err
    assert re.search(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] WARN Reset fetch offset "
                     r"\(kafka\.server\.ReplicaFetcherThread\)$", err, re.MULTILINE), err
