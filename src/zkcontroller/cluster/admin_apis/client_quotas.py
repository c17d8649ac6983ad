"""DescribeClientQuotas and AlterClientQuotas from an admin client (Kafka 2.8.2's ``KafkaApis``
``handleDescribeClientQuotasRequest``/``handleAlterClientQuotasRequest``, ZooKeeper mode), for a broker process or
an in-process listener: the rules and the reads and writes are `admin.client_quota_admin`'s, on the broker's
ZooKeeper session. A broker not started yet answers UNKNOWN_SERVER_ERROR (no session to read with)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.client_quota_admin import alter_client_quotas, describe_client_quotas
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_quotas import (
    AlteredQuota,
    AlterQuotasQuery,
    DescribedQuotas,
    DescribeQuotasQuery,
)


def describe_client_quotas_handler(server: Callable[[], KafkaServer | None]
                                   ) -> Callable[[DescribeQuotasQuery], Awaitable[DescribedQuotas]]:
    async def describe(query: DescribeQuotasQuery) -> DescribedQuotas:
        current = server()
        if current is None or current.zk is None:
            return DescribedQuotas(None, Errors.UNKNOWN_SERVER_ERROR, None)
        return await describe_client_quotas(current.zk, query, AdminManagerLog(current.broker_id))

    return describe


def alter_client_quotas_handler(server: Callable[[], KafkaServer | None]
                                ) -> Callable[[AlterQuotasQuery], Awaitable[list[AlteredQuota]]]:
    async def alter(query: AlterQuotasQuery) -> list[AlteredQuota]:
        current = server()
        if current is None or current.zk is None:
            return [AlteredQuota(e.entity, Errors.UNKNOWN_SERVER_ERROR, None) for e in query.entries]
        return await alter_client_quotas(current.zk, query, AdminManagerLog(current.broker_id))

    return alter
