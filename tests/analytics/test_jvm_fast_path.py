"""The JVM parser's fast path (hand-written scanning, first-character guards, ASCII-class regexes on plain lines)
against its regex-only path (``config_json(fast_path=False)``): identical staged rows on every shared Kafka log,
the benchmark generator's output, the test log sets, the edge cases of ``test_jvm_parser`` and a file of lines
made to sit on each boundary the fast path decides at; and, on that file, both against the Python reference."""

from __future__ import annotations

import json

import pytest
from tests.analytics import logsets
from tests.analytics.conftest import SHARED_LOGS

from zkcontroller.analytics import jvm_parser
from zkcontroller.analytics import kafka_log_parser as k
from zkcontroller.analytics.extract import chunk_dicts, extract, on_jvm
from zkcontroller.analytics.sources import plan_chunks, plan_sources, resolve_inputs

pytestmark = pytest.mark.spark

KC, SC = "(kafka.controller.KafkaController)", "(state.change.logger)"
T = "[2024-02-29 23:59:59,999]"


def _boundary_lines() -> list[str]:
    """Lines on either side of each fast-path decision (see KafkaLineParser.plainLayout and friends)."""
    heads = [
        T, "[2024-02-29T23:59:59,999]", "[2024-02-29 23:59:59.999]", "[2024-02-29 23:59:59,9999]",
        "[2024-02-29 23:59:59,99]", "[2024-02-29 23:59:59]", "[2024-02-29 23:59:59,999Z]",
        "[2024-02-29 23:59:59,999+0100]", "2024-02-29 23:59:59,999", "[2024-02-29  23:59:59,999]",
        "[2023-02-29 00:00:00,000]", "[2023-02-29 00:00:00,000]", "[2024-13-01 00:00:00,000]",
        "[0000-01-01 00:00:00,000]", "[0000-00-00 00:00:00,000]", "[2024-01-01 24:00:00,000]",
        "[2024-01-01 23:60:00,000]", "[2024-01-01 23:59:60,000]", "[2024-12-31 23:59:59,999]",
        "[1970-01-01 00:00:00,000]", "[9999-12-31 23:59:59,999]", "[2024-0a-01 00:00:00,000]",
        "[2024/01/01 00:00:00,000]", "[2024-02-29 23:59:59,999]]",
    ]
    levels = ["INFO", "WARN", "WARNING", "TRACE", "DEBUG", "ERROR", "FATAL", "WARNX", "info", "INFO\t", "INFO\x0b",
              "  INFO", "\tINFO"]
    messages = [
        "[Controller id=1 epoch=2] Resigned",
        "[Controller id=1 epoch=2] Changed partition t-1 from OnlinePartition to OfflinePartition",
        "",
        "(",
        "a (b) c",
        "Resigned (not the logger)",
    ]
    tails = [KC, SC, "(kafka.controller.KafkaController:42)", "(kafka.Controller$Event-1)", "(9kafka)", "()",
             "(kafka controller)", f"{KC} [main]", f"{KC} ", f"{KC}\t", "(k)", "(_k.$-)", "(k(x)", "((k)", "x)",
             "(kafka.contrôleur)"]
    lines = []
    for head in heads:
        lines.append(f"{head} INFO [Controller id=1] Resigned {KC}")
    for level in levels:
        lines.append(f"{T} {level} [Controller id=1] Resigned {KC}")
        lines.append(f"{T} {level} {KC}")
        lines.append(f"{T} {level}")
    for message in messages:
        for tail in tails:
            lines.append(f"{T} INFO {message} {tail}")
            lines.append(f"{T} INFO {message}{tail}")
            lines.append(f"{T} INFO {message}  \t{tail}")
    idents = [
        "[Controller id=1 epoch=2]", "[Controller id=1]", "[Controller 5]", "[controller-3]", "[ControllerId=4]",
        "[Controller id=x controller 7]", "[Controller id= controller-8 epoch=]", "[Controller id=1 Controller 2]",
        "[xController 6]", "[ontroller 6]", "[Controller id=-1]", "[Controller id=99999999999 epoch=99999999999]",
        "[Topic Deletion Manager 3]", "[Topic Deletion Manager x] controller 9", "[ Topic Deletion Manager 3]",
        "[Broker id=5]", "[Broker id=]", "[Broker id=5 epoch=7]", " [Broker id=5]", "[epoch=x epoch=5]",
        "[epoch=]", "[Partition t-1 broker=3]", "[Partition t-1 broker=3 ]", "[Partition t broker=3]",
        "[Partition a-b-1 broker=3]", "[Partition  t-1 broker=3]", "[]", "[unclosed", "[x]:", "[x],", "[x]: ",
        "[x]:  two spaces", "[x];", "[[nested] x]", "[Controller id=1]]",
        "[KafkaServer id=5]", "[KafkaServer id=]", "[KafkaServer id=x]", "[KafkaServer id=5 x]", "[KafkaServerid=5]",
        "[Kafka Server 5]", "[Kafka Server ]", "[Kafka Server5]", "[ Kafka Server 5]", "[Kafka Server 99999999999]",
        "[Broker id=Kafka Server 5]", "[kafkaServer id=5]",
        "[BrokerServer id=5]", "[BrokerServer id=]", "[BrokerServer id=x]", "[BrokerServerid=5]",
        "[Broker Server id=5]", "[BrokerServer id=5 epoch=3]", "[brokerServer id=5]",
    ]
    for ident in idents:
        for sep in ("", " ", ": ", ", "):
            lines.append(f"{T} INFO {ident}{sep}Resigned {KC}")
        lines.append(f"{T} INFO {ident} Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)")
    tps = ["t-1", "[t,1]", "t-", "-1", "t--1", "t,1", "a-b-12", "t-1]", "t-007", "t-99999999999", "a,b-1", "t-1x",
           "[t-1]", "-", "t-0-0", "t-+1"]
    for tp in tps:
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] Changed partition {tp} from NewPartition to "
                     f"OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1,-2, 3), "
                     f"zkVersion=0) {SC}")
        lines.append(f"{T} INFO [Controller id=1] Elected leader 2 for Offline partition {tp} {KC}")
        lines.append(f"{T} INFO [Partition {tp} broker=3] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)")
        lines.append(f"{T} INFO [Partition {tp} broker=3] ISR updated to 1,3 and version updated to [7] "
                     "(kafka.cluster.Partition)")
    for isr in ("1,2,3", "", "-", "--5", "1,2,2147483648", "-2147483648,2147483647", "007", "1 , 2", "x1"):
        lines.append(f"{T} INFO [Controller id=1] Newly added brokers: {isr}, deleted brokers: {isr}, "
                     f"all live brokers: {isr} {KC}")
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] Changed partition t-0 from OnlinePartition to "
                     f"OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=5, isr=List({isr}), "
                     f"zkVersion=5) {SC}")
    for old in ("Controller 1 epoch 5 changed partition [t,1] from NewPartition to OnlinePartition",
                "Broker 3 received LeaderAndIsr request correlation id 1 from controller 1 epoch 5",
                "Controller x epoch 5 changed partition [t,1] from A to B", "Controllers 1 epoch 5 x",
                "Broker 3", "BrokerX 3 y"):
        lines.append(f"{T} TRACE {old} {SC}")
        lines.append(f"{T} TRACE {old} {KC}")
    # Extras matched by hand at their first literal (leader, leader epoch, ISR), and the regex after a miss there.
    for state in ("leader=-, leaderEpoch=x, isr=List(, ), zkVersion=0) leader=7 leaderEpoch=3 ISR:4",
                  "leader=-5, leaderEpoch=007, isr=List( 1 ,2, ), zkVersion=0)", "Leader:-x leader=-3 isr=",
                  "with leader x with leader 9 isr=[ ] ISR [5]", "isr=List(x) isr=1", "leaderEpoch=, LeaderEpoch:2",
                  "leader=99999999999, isr=List(1,99999999999)", "isr=List(1,2 3)x, leader=1"):
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] Changed partition t-0 from OnlinePartition to "
                     f"OnlinePartition with state LeaderAndIsr({state} {SC}")
    # ^HEAD.*TAIL templates: TAIL's literal several times, or where TAIL then fails.
    for middle in ("x to broker 1 for partition t-1 to broker 2 for partition t-2", "to broker 1 for partition",
                   "to broker x for partition t-1 to broker 3 for partition t-3", " to broker 4 for partition [t,4]",
                   "nothing", "to broker 5 for partition t-5x"):
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] Sending become-leader LeaderAndIsr request {middle} {SC}")
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] sending become-follower LeaderAndIsr request{middle} {SC}")
    for middle in ("a correlation id 1 from controller 2 epoch 3 b correlation id 4 from controller 5 epoch 6",
                   "correlation id 1 from controller 2 epoch 3 for partition t-1 correlation id x",
                   "x correlation id 7 from controller 8 epoch 9 for partition [t,2]", "correlation id",
                   " correlation id 1 from controller 2 epoch 3 for partition"):
        lines.append(f"{T} TRACE [Broker id=1] Received LeaderAndIsr request {middle} {SC}")
        lines.append(f"{T} TRACE [Broker id=1] received LeaderAndIsr request{middle} {SC}")
    for middle in ("(leader=1, isr=1) for offline partition t-1 for offline partition t-2", "for offline partition t-",
                   "x for offline partition [t,3] y"):
        lines.append(f"{T} INFO [Controller id=1] Selected new leader and ISR {middle} {KC}")
    # Templates decided by hand (jvm_parser.HAND_TEMPLATES): each run, literal and separator on both sides.
    for tp in ("t-1", "[t,1]", "a-b-12", "-1", "t-", "t-1x", "t]-1", "t[-1", "t-1\t", "a,b-1", "t--1"):
        for rest in ("from OnlinePartition to OfflinePartition", "state from A to B", "state  from A to B",
                     "statefrom A to B", "from A_1 to B2 with state x", "from  A to B", "from A  to B", "from A to ",
                     "from A to", "from to B", "from A-1 to B", "state state from A to B", "from A to B-C"):
            lines.append(f"{T} TRACE [Controller id=1 epoch=2] Changed partition {tp} {rest} {SC}")
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] changed partition {tp}  from A to B {SC}")
        lines.append(f"{T} TRACE [Controller id=1 epoch=2] Changed state of replica 3 for partition {tp} from "
                     f"NewReplica to OnlineReplica {SC}")
    for replica in ("3", "", "x", "03", "99999999999", "3 ", "-3"):
        for rest in ("from A to B", "state from A to B", "from A to", "from A to B x"):
            lines.append(f"{T} TRACE [Controller id=1 epoch=2] changed state of replica {replica} for partition "
                         f"t-1 {rest} {SC}")
    for verb in ("Handling", "handling", "Completed", "completed", "Handled", "Xandling", "Hompleted", "C"):
        for rest in ("correlationId 7 from controller 1 epoch 5", "correlationId 7 from controller 1 epoch x",
                     "correlationId 7 from controller 1 epoch ", "correlationId 7 from controller 1 epochs 5",
                     "correlationId 7 from controller 12", "correlationId 7 from controller x", "correlationId  7 "
                     "from controller 1", "correlationId x from controller 1", "correlationId 7 from controller 1 "
                     "epoch 5 for 1 partitions transition for partition t-1"):
            lines.append(f"{T} INFO [Broker id=1] {verb} LeaderAndIsr request {rest} (state.change.logger)")
    tail = "in response to UpdateMetadata request sent by controller"
    for middle in (f"x {tail} 1 epoch 2", f"for partition t-1 {tail} 1 epoch 2 {tail} 3 epoch 4",
                   f"{tail} 1 epoch 2 {tail} x epoch 4", f"{tail} 1 epoch 2 {tail} 3 epoch", f"{tail} 5 epoch 6",
                   f" {tail} 5 epoch 6", f"x{tail} 5 epoch 6", f"{tail} 5 epoch 6x", f"{tail} 5 epochs 6",
                   f"{tail} 5 epoch 6 {tail}", f"{tail}"):
        for start in ("Cached leader info", "cached leader info", "Cached leader info ", "Cached leader"):
            lines.append(f"{T} TRACE [Broker id=1] {start} {middle} {SC}")
    # Line-level decisions: continuations, tracebacks and exceptions after a record, digits and "[" first.
    lines += [
        f"{T} ERROR [Controller id=1] Error processing event {KC}",
        "java.lang.IllegalStateException: boom",
        "\tat kafka.Foo.bar(Foo.scala:1)",
        "  ... 3 more",
        "Caused by: java.io.IOException: x",
        "Suppressed: y",
        "(kafka.Foo)",
        "1234 starts with a digit",
        "[not a record",
        "$weird.Name.Exception at start",
        "_x.yError",
        f"{T} ERROR [Controller id=1] Error moving replicas {KC}",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in f',
        "ValueError: after",
        f"{T} INFO [Controller id=1] Resigned {KC}",
        "During handling of the above exception, another exception occurred:",
        "+ Exception Group Traceback (most recent call last):",
        "| Traceback (most recent call last):",
        "The above exception was the direct cause of the following exception:",
        "Error: not a traceback start",
        f"kafka-1 | {T} INFO [Controller id=2] Resigned {KC}",
        f"2024-01-01T00:00:00.5Z stdout F {T} INFO Resigned {KC}",
        f"{T} INFO [Controller id=1]\x1cResigned {KC}",  # \x1c is Python whitespace: not a plain line
        f"{T}\x1fINFO [Controller id=1] Resigned {KC}",
        f"{T} INFO [Controller id=1] Resigned\x1d{KC}",
        f"{T} INFO [Controller id=1] Resigned {KC}\x1e",
        f"{T} INFO [Controller id=1] Resign\u00e9d {KC}",  # not ASCII: not plain
        f"{T} INFO [Controller id=\u0663] Resigned {KC}",
        f"{T} INFO Shutting down broker 5\x01 {KC}",
        f"{T} INFO\x0b[Controller id=1]\x0cResigned\r{KC}",
    ]
    return lines


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    from bench.bench_analytics import generate
    from tests.analytics.test_jvm_parser import _edge_cases
    from tests.analytics.test_kafka_log_parser import CASES, VARIANT_LINES

    if not SHARED_LOGS.is_dir():
        pytest.skip(f"shared Kafka logs not found at {SHARED_LOGS}")
    root = tmp_path_factory.mktemp("jvm-fast")
    (root / "bench").mkdir()
    generate(root / "bench" / "controller.log", 20_000, seed=11)
    logsets.write_broken(root / "broken")
    logsets.write_scenario(root / "prod")
    (root / "edge").mkdir()
    (root / "edge" / "edge-cases.log").write_bytes(_edge_cases())
    (root / "edge" / "variants.log").write_text(
        "\n".join([*(line for line, _, _ in CASES), *VARIANT_LINES]) + "\n", encoding="utf-8")
    (root / "boundary").mkdir()
    (root / "boundary" / "boundary.log").write_text("\n".join(_boundary_lines()) + "\n", encoding="utf-8")
    return [str(SHARED_LOGS.resolve()), str(root / "bench"), str(root / "broken"), str(root / "prod"),
            str(root / "edge"), str(root / "boundary")]


def _rows(df) -> list[tuple]:
    return sorted(tuple((k, repr(v)) for k, v in sorted(r.asDict().items())) for r in df.collect())


def _parse(spark, inputs: list[str], config: str, chunk_bytes: int | None = None) -> list[tuple]:
    files = resolve_inputs(inputs)
    chunks = [c for c in plan_chunks(plan_sources(files), 1, chunk_bytes) if on_jvm(c)]
    return _rows(jvm_parser.parse(spark, chunk_dicts(chunks), config))


def _mismatch(regex: list[tuple], fast: list[tuple]) -> str:
    only_regex, only_fast = sorted(set(regex) - set(fast)), sorted(set(fast) - set(regex))
    return f"{len(only_regex)} rows only from the regex path, e.g. {only_regex[:2]}; {len(only_fast)} only from the " \
           f"fast path, e.g. {only_fast[:2]}"


@pytest.mark.parametrize("chunk_bytes", [None, 2048])
def test_fast_path_and_regex_only_path_give_identical_rows(spark, inputs: list[str], chunk_bytes: int | None) -> None:
    """Default chunks on everything; 2 KiB chunks (records cut at a chunk's start) on the odd files."""
    assert jvm_parser.available(spark) is None, jvm_parser.available(spark)
    chosen = inputs if chunk_bytes is None else inputs[2:]
    regex = _parse(spark, chosen, jvm_parser.config_json(fast_path=False), chunk_bytes)
    fast = _parse(spark, chosen, jvm_parser.config_json(fast_path=True), chunk_bytes)
    assert len(regex) > (20_000 if chunk_bytes is None else 500)
    assert fast == regex, _mismatch(regex, fast)


def test_boundary_lines_match_the_python_reference(spark, inputs: list[str]) -> None:
    """The boundary file through the Python parser too: the regex-only path alone could share a fast-path bug."""
    files = resolve_inputs([inputs[-1]])
    extracted = extract(spark, files, parser="python")
    try:
        python = _rows(extracted.parsed)
    finally:
        extracted.release()
    fast = _parse(spark, [inputs[-1]], jvm_parser.config_json(fast_path=True))
    kinds = {dict(row)["kind"] for row in fast}
    assert {"'controller_resigned'", "'partition_state_change'", "'isr_shrink'", "'isr_update'", "'broker_change'",
            "'leader_and_isr_request'", "'leader_and_isr_received'", "'leader_election'"} <= kinds
    assert fast == python, _mismatch(python, fast)


def test_the_fast_path_runs_its_own_code(spark, inputs: list[str]) -> None:
    """A plain-line variant that never matches changes the fast config's rows, not the regex-only config's: the
    comparison above compares two different paths."""
    def breaking(fast_path: bool) -> str:
        config = json.loads(jvm_parser.config_json(fast_path))
        for template in config["templates"]:
            if template["kind"] == "controller_resigned":
                template["plain"] = "(?!)"
        return json.dumps(config)

    boundary = [inputs[-1]]
    assert _parse(spark, boundary, breaking(False)) == _parse(spark, boundary, jvm_parser.config_json(False))
    assert _parse(spark, boundary, breaking(True)) != _parse(spark, boundary, jvm_parser.config_json(True))


def test_hand_written_templates_decide_without_their_regex(spark, inputs: list[str]) -> None:
    """With the regexes of the HAND_TEMPLATES templates made never to match, the fast path still finds their
    lines in the boundary file (decided by handMatch), the regex-only path none."""
    hand = {"'partition_state_change'", "'replica_state_change'", "'leader_and_isr_handled'",
            "'update_metadata_received'"}  # as _rows gives them (repr)

    def without_regex(fast_path: bool) -> str:
        config = json.loads(jvm_parser.config_json(fast_path))
        for template in config["templates"]:
            if template["hand"]:
                template["pattern"] = template["plain"] = "(?!)"
        return json.dumps(config)

    def kinds(config: str) -> set[str]:
        return {dict(row)["kind"] for row in _parse(spark, [inputs[-1]], config)}

    assert hand <= kinds(without_regex(True))
    assert not hand & kinds(without_regex(False))


def test_a_changed_hand_written_pattern_stops_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    jvm_parser.config_json.cache_clear()
    monkeypatch.setattr(k, "IDENT_EPOCH", r"epoch[=:](\d+)")
    try:
        with pytest.raises(ValueError, match="IDENT_EPOCH changed"):
            jvm_parser.config_json()
    finally:
        jvm_parser.config_json.cache_clear()


def test_every_hand_written_template_is_still_a_template() -> None:
    """A template changed in kafka_log_parser keeps its rows but loses its fast path: say so here."""
    assert set(jvm_parser.HAND_TEMPLATES) <= {t.pattern for t in k.TEMPLATES}
    hands = [t["hand"] for t in json.loads(jvm_parser.config_json())["templates"]]
    assert sorted(h for h in hands if h) == sorted(jvm_parser.HAND_TEMPLATES.values())


def test_plain_regex_variants_use_java_ascii_classes() -> None:
    assert jvm_parser.java_regex(r"^[^\],\s]+(\d+)\w\b", plain=True) == \
        r"^[^\],\s]+(\d+)\w(?:(?<=\w)(?!\w)|(?<!\w)(?=\w))"
