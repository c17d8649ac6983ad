"""``--broker-ids`` of ``demo`` and ``cluster``: an empty list and ids Kafka would refuse are usage errors.

``--broker-ids ''`` ran the default brokers 1,2,3 without a word; an id past Kafka's ``reserved.broker.max.id``
(1000) started a broker that registered port 9092 + ID, past 65535, which the controller skipped as unreadable:
the broker ran but never joined the cluster."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.broker.config import MAX_RESERVED_BROKER_ID
from zkcontroller.cli import main, parse_broker_ids

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize("command", ["demo", "cluster"])
@pytest.mark.parametrize(("broker_ids", "message"), [
    ("", "give at least one non-negative broker id"),
    (",", "give at least one non-negative broker id"),
    ("1,1001", "broker ids must be at most 1000 (Kafka's reserved.broker.max.id, which bounds broker.id), got 1001"),
    ("2147483648,1", "broker ids must be at most 1000"),
])
def test_broker_ids_kafka_would_refuse_are_a_usage_error(command: str, broker_ids: str, message: str) -> None:
    result = CliRunner().invoke(main, [command, "--broker-ids", broker_ids, "--no-listeners"])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_ids_up_to_the_bound_pass() -> None:
    assert parse_broker_ids(None, f"0,{MAX_RESERVED_BROKER_ID}") == [0, MAX_RESERVED_BROKER_ID]
    assert parse_broker_ids(2, None) == [1, 2]
