"""The pure-Python reference parser, per Kafka version family and per deployment variant (no Spark)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zkcontroller.analytics.kafka_log_parser import (
    IDENT,
    LAYOUT,
    OLD_STATE_PREFIX,
    REASON_BAD_TIMESTAMP,
    REASON_IDENT_NOT_NUMBER,
    REASON_NO_LAYOUT,
    REASON_NO_TIMESTAMP,
    TEMPLATES,
    KafkaLogParser,
    ParsedLine,
    RejectedLine,
    bad_field_reason,
    fast_search,
    literal_prefixes,
)

PARSER = KafkaLogParser()
SC = "(state.change.logger)"
KC = "(kafka.controller.KafkaController)"
KS = "(kafka.server.KafkaServer)"

# (line, kind, expected subset of fields) -- one or more per version family of TEMPLATES.md.
CASES = [
    # 0.10.2-0.11: no log ident on state-change lines, [topic,partition] keys, "with leader N".
    (f"[2017-05-02 09:14:03,212] TRACE Controller 2 epoch 14 changed partition [click_stream,3] from "
     f"OfflinePartition to OnlinePartition with leader 2 {SC}", "partition_state_change",
     {"controller_id": 2, "controller_epoch": 14, "topic": "click_stream", "partition": 3,
      "from_state": "OfflinePartition", "to_state": "OnlinePartition", "leader": 2}),
    (f"[2017-05-02 09:14:03,210] TRACE Controller 2 epoch 14 elected leader 2 for Offline partition "
     f"[click_stream,3] {SC}", "leader_election", {"leader": 2, "strategy": "offline", "controller_epoch": 14}),
    ("[2017-05-02 09:14:03,204] WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for "
     "[click_stream,3]. Elect leader 2 from live brokers 2. There's potential data loss. "
     "(kafka.controller.OfflinePartitionLeaderSelector)", "leader_election",
     {"topic": "click_stream", "partition": 3, "leader": 2, "clean": False}),
    (f"[2017-05-02 09:14:02,981] INFO [Controller 2]: Broker 2 is ready to serve as the new controller with "
     f"epoch 14 {KC}", "controller_ready", {"controller_id": 2, "controller_epoch": 14}),
    (f"[2015-06-03 11:20:45,310] INFO [Controller 1]: Controller 1 incremented epoch to 10 {KC}",
     "controller_elected", {"controller_id": 1, "controller_epoch": 10}),
    (f"[2018-03-12 15:02:11,077] TRACE Broker 2 received LeaderAndIsr request (LeaderAndIsrInfo:(Leader:1,ISR:1,2,"
     f"LeaderEpoch:0,ControllerEpoch:1),ReplicationFactor:2),AllReplicas:1,2) correlation id 1 from controller 1 "
     f"epoch 1 for partition [t,0] {SC}", "leader_and_isr_received",
     {"broker_id": 2, "controller_id": 1, "controller_epoch": 1, "leader": 1, "isr": [1, 2], "leader_epoch": 0}),
    # 1.0: bracketed idents with id=, JSON leader-and-ISR.
    (f"[2018-02-14 08:30:12,405] INFO [Controller id=2] New leader and ISR for partition sensors-4 is "
     f'{{"leader":-1,"leader_epoch":3,"isr":[2]}} {KC}', "isr_change",
     {"controller_id": 2, "topic": "sensors", "partition": 4, "leader": -1, "leader_epoch": 3, "isr": [2]}),
    (f"[2018-02-14 08:30:12,977] TRACE [Controller id=2 epoch=6] Elected leader 1 for Offline partition "
     f"__consumer_offsets-7 {SC}", "leader_election",
     {"controller_id": 2, "controller_epoch": 6, "topic": "__consumer_offsets", "partition": 7, "leader": 1}),
    # 1.1-2.5: LeaderAndIsr(... zkVersion=) state.
    (f"[2020-01-29 22:42:40,010] TRACE [Controller id=0 epoch=1] Changed partition my-topic-2 from NewPartition to "
     f"OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 2), zkVersion=0) {SC}",
     "partition_state_change", {"topic": "my-topic", "partition": 2, "leader": 0, "isr": [0, 2], "leader_epoch": 0}),
    (f"[2018-10-02 13:45:09,118] INFO [Controller id=0] Epoch incremented to 6 {KC}", "controller_elected",
     {"controller_id": 0, "controller_epoch": 6}),
    (f"[2018-06-21 07:12:55,630] INFO [Controller id=2] 2 successfully elected as the controller {KC}",
     "controller_elected", {"controller_id": 2, "controller_epoch": None}),
    # 2.1-3.9: election line carries the epoch; 2.4+ election type and trigger; 2.6+ INFO ISR shrink.
    (f"[2021-02-08 16:05:41,302] INFO [Controller id=3] 3 successfully elected as the controller. Epoch "
     f"incremented to 12 and epoch zk version is now 12 {KC}", "controller_elected",
     {"controller_id": 3, "controller_epoch": 12}),
    (f"[2021-02-08 16:05:42,000] INFO [Controller id=3] Starting replica leader election (PREFERRED) for "
     f"partitions t-0,t-1 triggered by AdminClientTriggered {KC}", "election_started",
     {"strategy": "preferred", "trigger": "admin"}),
    (f"[2021-02-08 16:05:41,688] INFO [Controller id=3 epoch=12] Partition billing-5 state changed to (Leader:-1,"
     f"ISR:4,LeaderEpoch:6,ControllerEpoch:12) after removing replica 1 from the ISR as part of transition to "
     f"OfflineReplica {SC}", "isr_change",
     {"topic": "billing", "partition": 5, "leader": -1, "isr": [4], "leader_epoch": 6, "broker_id": 1}),
    # 3.1 prints ZkVersion in LeaderIsrAndControllerEpoch; 3.2+ also LeaderRecoveryState.
    (f"[2026-11-22 06:36:20,565] INFO [Controller id=2 epoch=2] Partition orders-1 state changed to (Leader:-1,"
     f"ISR:2,3,LeaderEpoch:1,ZkVersion:7,ControllerEpoch:2) after removing replica 1 from the ISR as part of "
     f"transition to OfflineReplica {SC}", "isr_change",
     {"controller_id": 2, "controller_epoch": 2, "topic": "orders", "partition": 1, "leader": -1, "isr": [2, 3],
      "leader_epoch": 1, "broker_id": 1}),
    (f"[2023-03-07 10:11:12,131] INFO [Controller id=0 epoch=1] Partition t-0 state changed to (Leader:0,ISR:0,"
     f"LeaderRecoveryState:RECOVERED,LeaderEpoch:4,ZkVersion:5,ControllerEpoch:1) after removing replica 1 from "
     f"the ISR as part of transition to OfflineReplica {SC}", "isr_change",
     {"topic": "t", "partition": 0, "leader": 0, "isr": [0], "leader_epoch": 4, "controller_epoch": 1,
      "broker_id": 1}),
    (f"[2021-02-08 16:05:41,745] ERROR [Controller id=3 epoch=12] Controller 3 epoch 12 failed to change state for "
     f"partition audit-trail-2 from OfflinePartition to OnlinePartition {SC}",
     "partition_state_change_failed", {"controller_epoch": 12, "partition": 2, "to_state": "OnlinePartition"}),
    (f"[2021-02-08 16:06:20,417] INFO [Controller id=3] Broker failure callback for 1,2 {KC}", "broker_failed",
     {"brokers": [1, 2]}),
    (f"[2021-02-08 16:06:20,533] INFO [Controller id=3] Resigned {KC}", "controller_resigned", {"controller_id": 3}),
    # A controller epoch past Int.MaxValue wraps to Int.MinValue (Kafka's Int): every line stating one reads it.
    (f"[2026-11-28 10:00:00,000] INFO [Controller id=1] Ready to serve as the new controller with epoch "
     f"-2147483648 {KC}", "controller_ready", {"controller_id": 1, "controller_epoch": -2147483648}),
    (f"[2026-11-28 10:00:00,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch "
     f"incremented to -2147483648 and epoch zk version is now 7 {KC}", "controller_elected",
     {"controller_id": 1, "controller_epoch": -2147483648}),
    (f"[2026-11-28 10:00:00,000] INFO [Controller id=1] Epoch incremented to -2147483647 {KC}", "controller_elected",
     {"controller_id": 1, "controller_epoch": -2147483647}),
    (f"[2026-11-28 10:00:00,000] INFO [Controller id=1 epoch=-2147483648] Changed partition t-0 from "
     f"OnlinePartition to OfflinePartition {SC}", "partition_state_change",
     {"controller_id": 1, "controller_epoch": -2147483648, "topic": "t", "partition": 0}),
    (f"[2026-11-28 10:00:00,000] INFO [Controller id=1 epoch=-2147483648] Partition t-0 state changed to (Leader:-1,"
     f"ISR:3,LeaderEpoch:2,ControllerEpoch:-2147483648) after removing replica 2 from the ISR as part of transition "
     f"to OfflineReplica {SC}", "isr_change", {"controller_epoch": -2147483648, "leader": -1, "broker_id": 2}),
    (f"[2026-11-28 10:00:00,000] TRACE [Broker id=1] Received LeaderAndIsr request PartitionState(controllerEpoch="
     f"-2147483648, leader=1, leaderEpoch=3, isr=1, zkVersion=3, replicas=1, isNew=false) correlation id 4 from "
     f"controller 2 epoch -2147483648 for partition t-0 {SC}", "leader_and_isr_received",
     {"broker_id": 1, "controller_id": 2, "controller_epoch": -2147483648, "topic": "t", "partition": 0}),
    (f"[2026-11-28 10:00:00,000] INFO [Broker id=1] Handling LeaderAndIsr request correlationId 4 from controller 2 "
     f"epoch -2147483648 {SC}", "leader_and_isr_handled", {"controller_id": 2, "controller_epoch": -2147483648}),
    (f"[2026-11-28 10:00:00,000] TRACE [Broker id=1] Cached leader info PartitionState(controllerEpoch=-2147483648, "
     f"leader=1, leaderEpoch=3, isr=1, zkVersion=3, replicas=1, offlineReplicas=) for partition t-0 in response to "
     f"UpdateMetadata request sent by controller 2 epoch -2147483648 with correlation id 5 {SC}",
     "update_metadata_received", {"controller_id": 2, "controller_epoch": -2147483648}),
    (f"[2026-11-28 10:00:00,000] WARN [Broker id=2] Ignoring LeaderAndIsr request from controller 1 with correlation "
     f"id 5 epoch -2147483648 for partition t-0 since its associated leader epoch 3 is not higher than the current "
     f"leader epoch 3 {SC}", "leader_and_isr_ignored", {"controller_id": 1, "controller_epoch": -2147483648}),
    (f"[2017-03-01 10:00:00,000] TRACE Controller 1 epoch -2147483648 changed partition [t,0] state from "
     f"OnlinePartition to OfflinePartition {SC}", "partition_state_change",
     {"controller_id": 1, "controller_epoch": -2147483648}),
    # 3.2+: LeaderAndIsr(... leaderRecoveryState, partitionEpoch), 3.3+ topic ids on the broker side.
    (f"[2023-03-07 10:09:58,204] INFO [Controller id=1 epoch=2] Changed partition stock-levels-0 from "
     f"NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1), "
     f"leaderRecoveryState=RECOVERED, partitionEpoch=0) {SC}", "partition_state_change",
     {"topic": "stock-levels", "partition": 0, "leader": 1, "isr": [1]}),
    (f"[2023-03-07 10:09:58,371] INFO [Broker id=1] Leader stock-levels-0 with topic id Some(Xq3vR0aWTcK5bN8mYpL2dA) "
     f"starts at leader epoch 3 from offset 0 with partition epoch 0, high watermark 0, ISR [1,2], adding "
     f"replicas [] and removing replicas []. Previous leader epoch was -1. {SC}", "became_leader",
     {"broker_id": 1, "topic": "stock-levels", "leader_epoch": 3, "isr": [1, 2]}),
    # 2.8 on Scala 2.13 prints the target Seq by its class: ArrayBuffer (built from a request) or List (decoded).
    (f"[2021-01-10 14:20:11,000] INFO [Controller id=1] Target replicas ArrayBuffer(2, 3) have all caught up with "
     f"the leader for reassigning partition t-0 {KC}", "partition_reassignment",
     {"controller_id": 1, "topic": "t", "partition": 0, "replicas": [2, 3], "phase": "caught_up"}),
    (f"[2021-01-10 14:20:11,000] INFO [Controller id=1] Target replicas List(4) have all caught up with "
     f"the leader for reassigning partition t-1 {KC}", "partition_reassignment",
     {"controller_id": 1, "topic": "t", "partition": 1, "replicas": [4], "phase": "caught_up"}),
    # Our own line (no Kafka counterpart) under our own logger, in controller.log: read, with its controller.
    ("[2026-11-28 02:00:00,000] WARN [Controller id=2] Unclean leader election for partition t-0: new leader 3 "
     "was not in the ISR [1]; records only the old ISR had are lost (unclean leader elections so far: 1) "
     "(zkcontroller.controller.UncleanElection)", "other", {"controller_id": 2}),
    (f"[2023-03-07 10:09:58,800] INFO [Controller id=0] Shutting down broker 2 {KC}", "controlled_shutdown",
     {"broker_id": 2}),
    # "Stopped fetchers" lines state the controller and epoch whose request the broker handled (were `other`).
    (f"[2019-03-01 10:00:00,000] TRACE [Broker id=2] Stopped fetchers as part of become-leader request from "
     f"controller 1 epoch 7 with correlation id 3 for partition t-0 (last update controller epoch 6) {SC}",
     "fetchers_stopped", {"broker_id": 2, "controller_id": 1, "controller_epoch": 7, "topic": "t", "partition": 0}),
    (f"[2021-03-01 10:00:00,000] INFO [Broker id=0] Stopped fetchers as part of LeaderAndIsr request "
     f"correlationId 1 from controller 0 epoch 2 as part of the become-leader transition for 3 partitions {SC}",
     "fetchers_stopped", {"broker_id": 0, "controller_id": 0, "controller_epoch": 2}),
    (f"[2021-03-01 10:00:00,000] INFO [Broker id=1] Stopped fetchers as part of become-follower request from "
     f"controller 0 epoch 2 with correlation id 4 for 2 partitions {SC}",
     "fetchers_stopped", {"broker_id": 1, "controller_id": 0, "controller_epoch": 2}),
    (f"[2017-03-01 10:00:00,000] TRACE Broker 3 stopped fetchers as part of become-follower request from "
     f"controller 1 epoch 4 with correlation id 9 for partition [t,2] {SC}",
     "fetchers_stopped", {"broker_id": 3, "controller_id": 1, "controller_epoch": 4, "topic": "t", "partition": 2}),
    (f"[2023-03-07 10:09:58,900] INFO [Controller id=0] Checking need to trigger auto leader balancing {KC}",
     "other", {"controller_id": 0}),
    # ZooKeeper refused a stale controller's write (ControllerMovedException), every wording of 2.1-3.9 and ours
    # (TEMPLATES.md): were `other`, now refusals in split_brain_windows.
    (f"[2021-03-01 10:00:00,000] INFO [Controller id=1] Controller moved to another broker when processing "
     f"TopicChange. {KC}", "controller_moved", {"controller_id": 1, "controller_epoch": None}),
    ("[2021-03-01 10:00:00,000] ERROR [PartitionStateMachine controllerId=1] Controller moved to another broker "
     "when moving some partitions to OnlinePartition state (kafka.controller.ZkPartitionStateMachine)",
     "controller_moved", {"controller_id": 1}),
    ("[2021-03-01 10:00:00,000] ERROR [ReplicaStateMachine controllerId=2] Controller moved to another broker "
     "when moving some replicas to OfflineReplica state (kafka.controller.ZkReplicaStateMachine)",
     "controller_moved", {"controller_id": 2}),
    ("[2021-03-01 10:00:00,000] ERROR [PartitionStateMachine controllerId=3] Controller moved to another broker "
     "when trying to create the topic partition state znode (kafka.controller.ZkPartitionStateMachine)",
     "controller_moved", {"controller_id": 3}),
    (f"[2021-03-01 10:00:00,000] INFO [Controller id=1] Controller moved to another broker. Aborting controlled "
     f"shutdown {KC}", "controller_moved", {"controller_id": 1}),
    (f"[2021-03-01 10:00:00,000] INFO [Controller id=1] Controller moved to another broker. Aborting controller "
     f"startup procedure {KC}", "controller_moved", {"controller_id": 1}),
    (f"[2021-03-01 10:00:00,000] INFO [Controller id=1] Controller moved to another brokers {KC}", "other",
     {"controller_id": 1}),
    # How a controlled shutdown ended: the broker's server.log (KafkaServer.controlledShutdown, broker id from its
    # ident, 1.0+ `[KafkaServer id=N] `, 0.10.2-0.11 `[Kafka Server N], `), and the controller dropping brokers
    # that left from its shutting-down list (KafkaController.onBrokerFailure). All were `other`.
    (f"[2018-06-21 09:03:17,418] INFO [KafkaServer id=2] Controlled shutdown succeeded {KS}",
     "controlled_shutdown_end", {"broker_id": 2, "phase": "succeeded", "controller_id": None}),
    (f"[2021-06-01 10:00:40,100] WARN [KafkaServer id=3] Proceeding to do an unclean shutdown as all the controlled "
     f"shutdown attempts failed {KS}", "controlled_shutdown_end", {"broker_id": 3, "phase": "failed"}),
    (f"[2017-03-01 10:00:00,000] WARN [Kafka Server 2], Proceeding to do an unclean shutdown as all the controlled "
     f"shutdown attempts failed {KS}", "controlled_shutdown_end", {"broker_id": 2, "phase": "failed"}),
    (f"[2018-06-21 09:03:17,215] INFO [KafkaServer id=2] shutting down {KS}", "other", {"broker_id": 2}),
    # The broker's steps of a controlled shutdown (KafkaServer.controlledShutdown), texts per Kafka's source: 0.8.2-0.11
    # `[Kafka Server N], `, 1.0+ `[KafkaServer id=N] `; 3.1+ reworded the attempt lines. All were `other`.
    (f"[2018-06-21 09:03:17,216] INFO [KafkaServer id=2] Starting controlled shutdown {KS}",
     "controlled_shutdown_started", {"broker_id": 2, "phase": None, "controller_id": None}),
    (f"[2016-03-01 10:00:00,000] INFO [Kafka Server 4], Starting controlled shutdown {KS}",
     "controlled_shutdown_started", {"broker_id": 4}),
    (f"[2016-03-01 10:00:05,000] WARN [Kafka Server 4], Retrying controlled shutdown after the previous attempt "
     f"failed... {KS}", "controlled_shutdown_attempt_failed", {"broker_id": 4, "phase": "retrying"}),
    (f"[2021-06-01 10:00:05,000] WARN [KafkaServer id=3] Retrying controlled shutdown after the previous attempt "
     f"failed... {KS}", "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "retrying"}),
    (f"[2023-06-01 10:00:05,000] INFO [KafkaServer id=3] Retrying controlled shutdown (2 retries remaining) {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "retrying"}),
    (f"[2016-03-01 10:00:00,000] WARN [Kafka Server 4], Error during controlled shutdown, possibly because leader "
     f"movement took longer than the configured socket.timeout.ms: Connection refused {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 4, "phase": "error"}),
    (f"[2021-06-01 10:00:30,000] WARN [KafkaServer id=3] Error during controlled shutdown, possibly because leader "
     f"movement took longer than the configured controller.socket.timeout.ms and/or request.timeout.ms: "
     f"Connection to 1 was disconnected before the response was read {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "error"}),
    (f"[2017-03-01 10:00:00,000] INFO [Kafka Server 2], Remaining partitions to move: t-0,t-1 {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 2, "phase": "remaining", "topic": None}),
    # 2.3-3.0 print the RemainingPartitionCollection (AbstractCollection.toString), `[]` when empty
    (f"[2021-06-01 10:00:00,100] INFO [KafkaServer id=3] Remaining partitions to move: "
     f"[RemainingPartition(topicName='t', partitionIndex=0)] {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    (f"[2021-06-01 10:00:00,100] INFO [KafkaServer id=3] Remaining partitions to move: [] {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    # 0.8.2-2.2 on an error reply: nothing after the colon (the layout strips the space Kafka printed)
    (f"[2019-06-01 10:00:00,000] INFO [KafkaServer id=3] Remaining partitions to move:  {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    (f"[2017-03-01 10:00:00,000] INFO [Kafka Server 2], Remaining partitions to move: {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 2, "phase": "remaining"}),
    (f"[2019-06-01 10:00:00,000] INFO [KafkaServer id=3] Remaining partitions to move:x {KS}", "other", {}),
    (f"[2023-06-01 10:00:00,100] INFO [KafkaServer id=3] Controlled shutdown request returned after 30ms with 4 "
     f"partitions remaining to move {KS}", "controlled_shutdown_attempt_failed",
     {"broker_id": 3, "phase": "remaining"}),
    (f"[2023-06-01 10:00:00,100] INFO [KafkaServer id=3] Controlled shutdown request returned after 30ms with "
     f"error STALE_BROKER_EPOCH {KS}", "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    (f"[2023-06-01 10:00:00,100] INFO [KafkaServer id=3] Controlled shutdown request returned successfully after "
     f"25ms {KS}", "controlled_shutdown_end", {"broker_id": 3, "phase": "succeeded"}),
    # 0.8.2-3.0: the reply's error code follows "Remaining partitions to move" (KafkaServer.scala, 2.8.2: `info(s"Error
    # from controller: ${shutdownResponse.error}")`); both lines are the one failed attempt's. Once `other`.
    (f"[2021-06-01 10:00:00,101] INFO [KafkaServer id=3] Error from controller: NONE {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    (f"[2017-03-01 10:00:00,001] INFO [Kafka Server 2], Error code from controller: 41 {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 2, "phase": "remaining"}),
    (f"[2018-03-01 10:00:00,001] INFO [KafkaServer id=2] Error code from controller: -1 {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 2, "phase": "remaining"}),
    (f"[2019-06-01 10:00:00,001] INFO [KafkaServer id=3] Error from controller: STALE_BROKER_EPOCH {KS}",
     "controlled_shutdown_attempt_failed", {"broker_id": 3, "phase": "remaining"}),
    (f"[2019-06-01 10:00:00,001] INFO [KafkaServer id=3] Error from controller: {KS}", "other", {}),
    # 0.10.2-1.0: only ControlledShutdownLeaderSelector logs this line, so it is a controlled-shutdown election
    ("[2017-03-01 10:00:00,000] DEBUG [ControlledShutdownLeaderSelector]: Partition [t,0] : current leader = 1, "
     "new leader = 0 (kafka.controller.ControlledShutdownLeaderSelector)", "leader_election",
     {"strategy": "controlled_shutdown", "old_leader": 1, "leader": 0, "partition": 0}),
    # The broker process starting (KafkaServer.startup): a restarted controller's later "Resigned" ends no tenure
    (f"[2026-11-29 11:31:37,590] INFO [KafkaServer id=1] starting {KS}", "broker_starting", {"broker_id": 1}),
    (f"[2016-03-01 10:00:00,000] INFO [Kafka Server 4], starting {KS}", "broker_starting", {"broker_id": 4}),
    # 3.4+ in ZooKeeper-to-KRaft migration: a step of the shutdown "Starting controlled shutdown" began, not its start
    (f"[2023-06-01 10:00:00,000] INFO [KafkaServer id=3] Notifying KRaft of controlled shutdown {KS}",
     "controlled_shutdown_started", {"broker_id": 3, "phase": "kraft_notified"}),
    # KRaft mode (2.8+): the broker's server.log ident is BrokerServer's; its lines are out of scope (`other`).
    ("[2023-06-01 10:00:00,000] INFO [BrokerServer id=7] Transition from STARTING to STARTED "
     "(kafka.server.BrokerServer)", "other", {"broker_id": 7}),
    ("[2023-06-01 10:00:00,000] ERROR [BrokerServer id=7] Timed out waiting for the controller to approve "
     "controlled shutdown (kafka.server.BrokerServer)", "other", {"broker_id": 7}),
    # 3.4+ in migration, the same words from KafkaServer after its 5-minute wait for the KRaft controller (written
    # from KafkaServer.controlledShutdown): templates see the message only, so it stays `other` as the KRaft-mode
    # broker's line must (docs/analytics.md, Known limits); its ZooKeeper attempts and end line follow.
    (f"[2023-06-01 10:05:00,004] ERROR [KafkaServer id=3] Timed out waiting for the controller to approve "
     f"controlled shutdown {KS}", "other", {"broker_id": 3}),
    (f"[2021-05-19 12:40:07,352] INFO [Controller id=2] Removed 4 from list of shutting down brokers. {KC}",
     "controlled_shutdown_end", {"controller_id": 2, "brokers": [4], "phase": "removed", "broker_id": None}),
    (f"[2021-05-19 12:40:07,352] INFO [Controller id=2] Removed 1,3 from list of shutting down brokers. {KC}",
     "controlled_shutdown_end", {"brokers": [1, 3], "phase": "removed"}),
    (f"[2018-06-21 09:03:20,644] INFO [Controller id=1] Removed ArrayBuffer(2, 4) from list of shutting down "
     f"brokers. {KC}", "controlled_shutdown_end", {"brokers": [2, 4], "phase": "removed"}),
    (f"[2018-06-21 09:03:20,644] INFO [Controller id=1] Removed ArrayBuffer() from list of shutting down brokers. "
     f"{KC}", "controlled_shutdown_end", {"brokers": None, "phase": "removed"}),
]


@pytest.mark.parametrize(("line", "kind", "expected"), CASES, ids=[f"{i:02d}-{c[1]}" for i, c in enumerate(CASES)])
def test_version_families(line: str, kind: str, expected: dict[str, object]) -> None:
    parsed = PARSER.parse_line(1, line)
    assert isinstance(parsed, ParsedLine)
    assert parsed.kind == kind
    assert {k: parsed.fields[k] for k in expected} == expected


T0 = "[2023-03-07 10:09:58,800] INFO"
# (line, field): a numeric or broker-list field that does not fit its template -> a rejected line naming the field
# (docs/analytics.md, "Fields that do not fit"). test_jvm_parser feeds these to both parsers too.
# A value that starts as a number (or list) and then goes wrong: the strict pattern matches its good start, and
# the line was read in part (broker 5 of "5x") until the loose twins were also run where the text after a strict
# value may go on (``read_on``). Groups, extras (regex and Java's literal scan), Java's hand-written templates
# (Handling LeaderAndIsr, Cached leader info), the log ident's ids (plain and not plain), a sentence-final ".".
READ_IN_PART_CASES = [
    (f"{T0} [Controller id=1] Shutting down broker 5x {KC}", "broker_id"),
    (f"{T0} [Controller id=1] Broker failure callback for 1, two {KC}", "brokers"),
    (f"{T0} [Controller id=1] Broker failure callback for 1,2x {KC}", "brokers"),
    (f"{T0} [Controller id=1] Elected leader 5x for Offline partition t-0 {KC}", "leader"),
    (f"{T0} [Broker id=1] Leader t-0 starts at leader epoch 5x from offset 0 {SC}", "leader_epoch"),
    (f"{T0} [Broker id=1] Leader t-0 starts at leader epoch 5.5 from offset 0 {SC}", "leader_epoch"),
    (f"{T0} [Controller id=1 epoch=3] Changed partition t-0 from NewPartition to OnlinePartition with state "
     f"LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, x), zkVersion=0) {SC}", "isr"),
    (f"{T0} [Controller id=1 epoch=3] Changed partition t-0 from NewPartition to OnlinePartition with state "
     f"LeaderAndIsr(leader=1x, leaderEpoch=0, isr=List(1), zkVersion=0) {SC}", "leader"),
    (f"{T0} [Broker id=1] Handling LeaderAndIsr request correlationId 4 from controller 2x epoch 3 {SC}",
     "controller_id"),
    (f"{T0} [Broker id=1] Handling LeaderAndIsr request correlationId 4 from controller 2 epoch 3x {SC}",
     "controller_epoch"),
    (f"{T0} [Broker id=1] Cached leader info UpdateMetadataPartitionState(topicName='t', partitionIndex=0) for "
     f"partition t-0 in response to UpdateMetadata request sent by controller 1 epoch 7b with correlation id 0 "
     f"{SC}", "controller_epoch"),
    (f"{T0} [Controller id=5x] Resigned {KC}", "controller_id"),
    (f"{T0} [Controller id=5\u00e9] Resigned {KC}", "controller_id"),
    (f"{T0} [Controller id=5 epoch=3x] Resigned {KC}", "controller_epoch"),
    (f"{T0} [KafkaServer id=7_] starting {KC}", "broker_id"),
    (f"{T0} [Controller id=1] Newly added brokers: 1, deleted brokers: 2,3x, all live brokers: 1 {KC}", "brokers"),
]
# A log-ident id that is not a number at all: the field is left null, the line kept, with a warning (the job names
# the file and line). (line, field, kind)
IDENT_WARNING_CASES = [
    (f"{T0} [Controller id=x] Resigned {KC}", "controller_id", "controller_resigned"),
    (f"{T0} [Controller id=1 epoch=three] Resigned {KC}", "controller_epoch", "controller_resigned"),
    (f"{T0} [KafkaServer id=abc] starting {KC}", "broker_id", "broker_starting"),
    (f"{T0} [Partition t-0 broker=z] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)", "broker_id",
     "isr_shrink"),
    (f"{T0} [RequestSendThread controllerId=\u00e9] Controller 1 connected to broker {KC}", "controller_id",
     "other"),
]

UNFIT_CASES = [
    # beyond int32 (the columns are int32): a group, a list item, the log ident's
    (f"{T0} [Controller id=1] Epoch incremented to 99999999999999999999 {KC}", "controller_epoch"),
    (f"{T0} [Controller id=0] Newly added brokers: 3, deleted brokers: 1,2147483648,2147483647, all live brokers: "
     f"3 {KC}", "brokers"),
    (f"{T0} [Controller id=0] Shutting down broker 2147483648 {KC}", "broker_id"),
    (f"{T0} [Controller id=0 epoch=99999999999] Resigned {KC}", "controller_epoch"),
    # not a number where the template has one: the template then does not match at all ...
    (f"{T0} [Controller id=1] Newly added brokers: 1,x, deleted brokers: , all live brokers: 1,2 {KC}",
     "added_brokers"),
    (f"{T0} [Controller id=1] Epoch incremented to abc {KC}", "controller_epoch"),
    (f"{T0} [Controller id=1] Shutting down broker b1 {KC}", "broker_id"),
    (f"{T0} [Controller id=1] Broker failure callback for two {KC}", "brokers"),
    (f"{T0} [Controller id=1 epoch=2] Partition t-0 state changed to (Leader:1,ISR:1,x,LeaderEpoch:3,"
     f"ControllerEpoch:2) after removing replica 2 from the ISR {KC}", "isr"),
    # ... or an optional group or a field found apart from the template (an extra) has none
    (f"{T0} [Broker id=1] Handling LeaderAndIsr request correlationId 4 from controller 2 epoch - {SC}",
     "controller_epoch"),
    (f"{T0} [Controller id=1] 1 successfully elected as the controller. Epoch incremented to x1 and epoch zk "
     f"version is now 1 {KC}", "controller_epoch"),
    (f"{T0} [Controller id=1 epoch=3] Changed partition t-0 from NewPartition to OnlinePartition with state "
     f"LeaderAndIsr(leader=abc, leaderEpoch=0, isr=List(1), zkVersion=0) {SC}", "leader"),
    (f"{T0} [Controller id=1 epoch=3] Changed partition t-0 from NewPartition to OnlinePartition with state "
     f"LeaderAndIsr(leader=1, leaderEpoch=-, isr=List(1), zkVersion=0) {SC}", "leader_epoch"),
    *READ_IN_PART_CASES,
]


@pytest.mark.parametrize(("line", "field"), UNFIT_CASES, ids=[f"{i:02d}-{c[1]}" for i, c in enumerate(UNFIT_CASES)])
def test_a_field_that_does_not_fit_its_template_rejects_the_line_naming_the_field(line: str, field: str) -> None:
    parsed = PARSER.parse_line(7, line)
    assert isinstance(parsed, RejectedLine), parsed
    assert (parsed.line_number, parsed.reason, parsed.line) == (7, bad_field_reason(field), line)
    assert field in parsed.reason


@pytest.mark.parametrize("line", [
    # fits: a loose twin that finds a good value leaves the line to the templates (here: none matches)
    f"{T0} [Controller id=1] Newly added brokers: 1,2, deleted brokers: , all live brokers: 1,2 and more {KC}",
    f"{T0} [Controller id=1] 1 successfully elected as the controller {KC}",
    f"{T0} [Controller id=1 epoch=3] Changed partition t-0 state from NonExistentPartition to NewPartition with "
    f"assigned replicas 1,2 {SC}",
    f"{T0} [Controller id=1 epoch=2] Partition t-0 state changed to (Leader:1,ISR:,LeaderEpoch:3,"
    f"ControllerEpoch:2) after removing replica 2 from the ISR {KC}",
    # a value followed by what its twin does not take: a sentence's end, a key of the next field, a thread name
    f"{T0} [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 5, endOffset: 9). "
    "Out of sync replicas: (brokerId: 2, endOffset: 3). (kafka.cluster.Partition)",
    f"{T0} [Controller id=1 epoch=2] Partition t-0 state changed to (Leader:1,ISR:1,2,LeaderEpoch:3,"
    f"ControllerEpoch:2) after removing replica 2 from the ISR {KC}",
    f"{T0} [Controller id=1] Newly added brokers: 1, deleted brokers: 2,3, all live brokers: 1 {KC}",
    f"{T0} [Controller-1-to-broker-2-send-thread], Starting {KC}",
    f"{T0} [controller-event-thread]: Starting {KC}",
    f"{T0} [Controller id=1] Shutting down broker 5 {KC}",
])
def test_a_line_whose_fields_fit_is_not_rejected(line: str) -> None:
    parsed = PARSER.parse_line(1, line)
    assert isinstance(parsed, ParsedLine) and parsed.warning is None, parsed


@pytest.mark.parametrize(("line", "field", "kind"), IDENT_WARNING_CASES)
def test_a_log_ident_id_that_is_no_number_is_left_null_with_a_warning(line: str, field: str, kind: str) -> None:
    parsed = PARSER.parse_line(3, line)
    assert isinstance(parsed, ParsedLine), parsed
    assert (parsed.kind, parsed.fields[field], parsed.warning) == (kind, None,
                                                                   REASON_IDENT_NOT_NUMBER.format(field=field))


DEFAULT = f"[2020-10-13 21:07:36,519] INFO [Controller id=1] Resigned {KC}"


VARIANT_LINES = [
    DEFAULT,
    f"2020-10-13 21:07:36,519 INFO [Controller id=1] Resigned {KC} [controller-event-thread]",  # Strimzi
    f"2020-10-13T21:07:36.519 INFO [Controller id=1] Resigned {KC}",  # ISO 'T', dot millis
    f"[2020-10-13 23:07:36,519+0200] INFO [Controller id=1] Resigned {KC}",  # zone offset
    f"[2020-10-13T19:37:36.519-0130] INFO [Controller id=1] Resigned {KC}",  # ISO 'T' and an offset: honoured
    f"kafka-1    | {DEFAULT}",  # docker-compose
    f"2020-10-13T21:07:36.999999999Z stdout F {DEFAULT}",  # CRI / kubectl
    f"11:42:03,518  INFO || - [DockerizedKafkaTestSupport] kafka STDOUT: {DEFAULT}",  # test harness
    "[2020-10-13 21:07:36,519] INFO [Controller id=1] Resigned (kafka.controller.KafkaController:66)",  # (%c:%L)
]


@pytest.mark.parametrize("line", VARIANT_LINES,
                         ids=["default", "strimzi", "iso-t", "offset", "iso-t-offset", "compose", "cri", "harness",
                              "logger-line"])
def test_deployment_variants_parse_to_the_same_record(line: str) -> None:
    parsed = PARSER.parse_line(1, line)
    assert isinstance(parsed, ParsedLine)
    assert (parsed.kind, parsed.ts_ms, parsed.level, parsed.logger) == (
        "controller_resigned", 1602623256519, "INFO", "kafka.controller.KafkaController")


def test_stack_traces_belong_to_the_record_above_and_garbage_is_rejected_with_its_line_number() -> None:
    lines = [
        f"[2021-02-08 16:05:41,745] ERROR [Controller id=3 epoch=12] Controller 3 epoch 12 failed to change state "
        f"for partition t-1 from OfflinePartition to OnlinePartition {SC}",
        "kafka.common.StateChangeFailedException: Failed to elect leader for partition t-1 under strategy X",
        "\tat kafka.controller.ZkPartitionStateMachine.doElect(PartitionStateMachine.scala:431)",
        "Caused by: java.lang.IllegalStateException: boom",
        "\t... 12 more",
        "",
        "half a line that lost its head",
        "[2021-02-08 16:05:42,000] INFO no logger at the end",
        f"[2021-02-30 16:05:42,000] INFO [Controller id=3] Resigned {KC}",
    ]
    results = list(PARSER.parse_lines(lines))
    assert [type(r).__name__ for r in results] == ["ParsedLine", "RejectedLine", "RejectedLine", "RejectedLine"]
    assert [(r.line_number, r.reason) for r in results if isinstance(r, RejectedLine)] == [
        (7, REASON_NO_TIMESTAMP), (8, REASON_NO_LAYOUT), (9, REASON_BAD_TIMESTAMP)]


@pytest.mark.parametrize(("pattern", "prefixes"), [
    (r"^[Cc]hanged partition (\S+)", ("Changed partition ", "changed partition ")),
    (r"^(?:Broker (\d+) is r|R)eady to serve", ("Broker ", "R")),
    (r"^Partition (\[[^\],\s]+,\d+\]|[^\s\[\]]+-\d+) state", ("Partition ",)),
    (r"^(\d+) successfully elected", ()),  # no literal start: no guard
    (r"^a?b", ()), (r"^(?:ab|c)+x", ()), (r"^(?=x)y", ()),  # quantified or lookaround starts: no guard
    (r"(?:leader=|Leader:)(\d+)", ("Leader:", "leader=")),
])
def test_literal_prefixes_are_cut_short_never_guessed(pattern: str, prefixes: tuple[str, ...]) -> None:
    assert literal_prefixes(pattern) == prefixes


def test_template_guards_and_fast_searches_hold_on_every_sample_message(samples: Path) -> None:
    """The Spark extract skips a template whose literal prefixes a body lacks, and searches the leader/ISR
    fields with a lookahead; both must never change what the plain regexes find."""
    ident, old_prefix = re.compile(IDENT), re.compile(OLD_STATE_PREFIX)
    bodies = set()
    lines = [line for path in sorted(samples.iterdir()) for line in path.read_text(errors="replace").splitlines()]
    for line in [*lines, *(case[0] for case in CASES)]:
        parsed = re.match(LAYOUT, line)
        if parsed:
            body = ident.sub("", parsed.group(6), count=1)
            bodies |= {body, old_prefix.sub("", body, count=1)}
    matched = 0
    for template in TEMPLATES:
        rx = re.compile(template.pattern)
        for body in bodies:
            if rx.search(body):
                matched += 1
                assert not template.starts or body.startswith(template.starts), (template.pattern, body)
        for name, extra in template.extra.items():
            fast = re.compile(fast_search(extra))
            assert all(_first(fast, body) == _first(re.compile(extra), body) for body in bodies), name
    assert matched > 500


def _first(rx: re.Pattern[str], text: str) -> str | None:
    m = rx.search(text)
    return m.group(1) if m else None


def _exception_group_traceback() -> list[str]:
    """What our controller logs when a batch fails inside an asyncio.TaskGroup: an exception group's
    traceback ("  + Exception Group Traceback", "  | ..."), then the exception it caused."""
    import logging
    import sys

    try:
        try:
            raise ExceptionGroup("unhandled errors in a TaskGroup", [KeyError("broker 7")])
        except ExceptionGroup as group:
            raise ValueError("Controller epoch zkVersion check fails") from group
    except ValueError:
        return logging.Formatter().formatException(sys.exc_info()).splitlines()


def test_an_exception_group_traceback_folds_into_the_record_above() -> None:
    trace = _exception_group_traceback()
    assert trace[0].startswith("  + Exception Group Traceback")
    lines = ["[2026-01-01 00:00:14,329] ERROR [ReplicaStateMachine controllerId=2] Controller moved to another "
             "broker when moving some replicas to OfflineReplica state (kafka.controller.ZkReplicaStateMachine)",
             *trace, f"[2026-01-01 00:00:15,000] INFO [Controller id=2] Resigned {KC}"]
    results = list(PARSER.parse_lines(lines))
    assert [type(r).__name__ for r in results] == ["ParsedLine", "ParsedLine"], results
    assert results[0].exception == "ValueError: Controller epoch zkVersion check fails"
    assert results[1].line_number == len(lines)
