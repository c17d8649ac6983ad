"""The admin handler types declare the ``quota`` keyword `KafkaApis` passes once the broker keeps controller
mutation quotas, and the handlers the process assembly builds take it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from zkcontroller.broker.controller_mutation_quota import UNBOUNDED
from zkcontroller.broker.kafka_apis import CreatePartitionsHandler, CreateTopicsHandler, DeleteTopicsHandler
from zkcontroller.cluster.admin_apis.create_partitions import create_partitions_handler
from zkcontroller.cluster.admin_apis.create_topics import create_topics_handler
from zkcontroller.cluster.admin_apis.delete_topics import delete_topics_handler


@pytest.mark.parametrize(("declared", "build"), [
    (CreateTopicsHandler, create_topics_handler),
    (DeleteTopicsHandler, delete_topics_handler),
    (CreatePartitionsHandler, create_partitions_handler),
])
def test_the_handler_type_declares_the_quota_keyword(declared: type, build: Callable[[Any], Any]) -> None:
    quota = inspect.signature(declared.__call__).parameters.get("quota")
    assert quota is not None, f"{declared.__name__} does not declare quota"
    assert quota.kind is inspect.Parameter.KEYWORD_ONLY
    positional = [p for p in inspect.signature(declared.__call__).parameters.values()
                  if p.kind is inspect.Parameter.POSITIONAL_ONLY and p.name != "self"]
    handler = build(lambda: None)
    taken = inspect.signature(handler).parameters
    # the handler takes what the type declares: as many positional arguments, and quota by keyword, defaulting
    # to no quota (KafkaApis passes none while no quota node exists)
    assert len([p for p in taken.values() if p.name != "quota"]) == len(positional)
    assert taken["quota"].default is UNBOUNDED
