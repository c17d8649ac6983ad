"""The "Unexpected config names" sets of ``kafka-configs --bootstrap-server --alter`` for users and clients, as
Kafka 2.8.2's ConfigCommand prints them (Scala 2.13). The expected strings were printed by scala-library 2.13.18
for the same expressions over an immutable Map of these seven keys."""

from __future__ import annotations

import pytest

from zkcontroller.admin.bootstrap_quotas import check_keys
from zkcontroller.admin.client_quotas import CLIENTS, USERS, QuotaConfigsError

ADDED = {"a1": "1", "a2": "2", "consumer_byte_rate": "3", "a3": "3", "SCRAM-SHA-256": "4", "SCRAM-SHA-512": "5",
         "a4": "6"}


def test_a_users_unknown_keys_are_the_maps_key_set() -> None:
    """``configsToBeAdded.keys.filterNot(..)`` of a HashMap: a key set, printed ``Set`` in the map's order."""
    with pytest.raises(QuotaConfigsError, match=r"Unexpected config names: Set\(a4, a3, a1, a2\)$"):
        check_keys([USERS], ["u"], ADDED, [])


def test_a_clients_unknown_and_scram_keys_are_built_into_a_new_set() -> None:
    """``unknownConfigsToAdd ++ scramConfigsToAddMap.keys``: six keys through the Set builder, a ``HashSet``."""
    with pytest.raises(QuotaConfigsError,
                       match=r"Unexpected config names: HashSet\(a4, SCRAM-SHA-512, SCRAM-SHA-256, a3, a1, a2\)$"):
        check_keys([CLIENTS], ["c"], ADDED, [])
