"""The broker's own "Starting controlled shutdown" (``controlled_shutdown_started``): when a shutdown known only
from its server.log began, in the ``controlled_shutdowns`` table and the driver's spans (incidents) alike; the
controller's requests, where read, still say when and how many."""

from __future__ import annotations

import random
from collections import Counter

from tests.analytics.test_controller_timeline import _tenure
from tests.analytics.test_transform import T0, at

from zkcontroller.analytics.controller_timeline import SAID, SHUTDOWN_START, broker_failures, classify, shutdown_spans
from zkcontroller.analytics.timeline_tables import failure_windows

END = dict(kind="controlled_shutdown_end")
START = dict(kind=SHUTDOWN_START)
ROWS = [
    # broker 2: the controller's request (its clock) decides; the broker's start line 12 ms before changes nothing
    {**START, "ms": -12, "broker_id": 2}, dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
    {**END, "ms": 20, "broker_id": 2, "phase": "succeeded"},
    # broker 5: server.log only, started 30 ms before it succeeded (choopong 1.1's sample: 27,765 then 27,795)
    {**START, "ms": 970, "broker_id": 5}, {**END, "ms": 1_000, "broker_id": 5, "phase": "succeeded"},
    # broker 6: started, every attempt failed 40 s later; a second stop with a start of its own
    {**START, "ms": 2_000, "broker_id": 6}, {**END, "ms": 42_000, "broker_id": 6, "phase": "failed"},
    {**START, "ms": 299_000, "broker_id": 6}, {**END, "ms": 300_000, "broker_id": 6, "phase": "succeeded"},
    # broker 7: a start more than SHUTDOWN_START_MS (300 s) before the line is not this stop's
    {**START, "ms": 10_000, "broker_id": 7}, {**END, "ms": 310_001, "broker_id": 7, "phase": "succeeded"},
    # broker 8: the start before its previous line began that one; the second line has none
    {**START, "ms": 100, "broker_id": 8}, {**END, "ms": 200, "broker_id": 8, "phase": "succeeded"},
    {**END, "ms": 5_000, "broker_id": 8, "phase": "succeeded"},
    # broker 9: started twice (killed during the first), the latest start is this stop's
    {**START, "ms": 10_000, "broker_id": 9}, {**START, "ms": 10_500, "broker_id": 9},
    {**END, "ms": 11_000, "broker_id": 9, "phase": "succeeded"},
    # broker 4: a start with no end line and no request: no row (nothing says it stopped)
    {**START, "ms": 50_000, "broker_id": 4},
    # broker 3: 3 attempts timing out (30 s connect + 30 s request + 5 s backoff each) end 195 s after the start
    {**START, "ms": 20_000, "broker_id": 3}, {**END, "ms": 215_000, "broker_id": 3, "phase": "failed"},
    # broker 10: a start before the broker registered again (that life crashed mid-shutdown) is not this stop's
    {**START, "ms": 1_000, "broker_id": 10}, dict(ms=2_000, kind="broker_registered", brokers=[10]),
    {**END, "ms": 5_000, "broker_id": 10, "phase": "succeeded"},
    # broker 11: nor one before the controller saw it added back (a membership diff's added brokers)
    {**START, "ms": 1_000, "broker_id": 11},
    dict(ms=2_000, kind="broker_change", brokers=[], added_brokers=[11], live_brokers=[11]),
    {**END, "ms": 5_000, "broker_id": 11, "phase": "succeeded"},
]
EXPECTED = [  # broker, requested at, attempts, outcome, ended at, line number (of the requested-at line)
    (2, 0, 1, "succeeded", 20, 2),
    (3, 20_000, 0, "failed", 215_000, 19),
    (5, 970, 0, "succeeded", 1_000, 4),
    (6, 2_000, 0, "failed", 42_000, 6), (6, 299_000, 0, "succeeded", 300_000, 8),
    (7, 310_001, 0, "succeeded", 310_001, 11),
    (8, 100, 0, "succeeded", 200, 12), (8, 5_000, 0, "succeeded", 5_000, 14),
    (9, 10_500, 0, "succeeded", 11_000, 16),
    (10, 5_000, 0, "succeeded", 5_000, 23), (11, 5_000, 0, "succeeded", 5_000, 26),
]


def _membership() -> list[dict[str, object]]:
    """``ROWS`` as the job collects membership rows (line numbers from 1, as ``events`` numbers them)."""
    return [{"cluster": "c", "source_file": "f.log", "line_number": n, "brokers": [], "broker_id": None,
             "phase": None, **{k: v for k, v in row.items() if k != "ms"}, "ts_ms": T0 + int(row["ms"])}
            for n, row in enumerate(ROWS, start=1)]


def test_the_driver_spans_begin_at_the_brokers_start_line() -> None:
    got = [(s["broker_id"], int(s["first_ms"]) - T0, s["attempts"], s["outcome"], int(s["ended_ms"]) - T0,
            s["row"]["line_number"]) for s in shutdown_spans(_membership())]
    assert got == EXPECTED


def test_a_start_line_is_no_membership_change_that_ends_a_failure_window() -> None:
    membership = [{"cluster": "c", "kind": SHUTDOWN_START, "ts_ms": 500, "broker_id": 3, "brokers": None}]
    failures = [{"cluster": "c", "broker_id": 2, "detected_ms": 0}]
    assert [w["until_ms"] for w in failure_windows(failures, membership, [], 60_000)] == [60_000]


def test_the_table_begins_server_log_only_stops_at_the_brokers_start_line(spark) -> None:
    from tests.analytics.test_admin_tables import _rows, _shutdown_incidents
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    table = _rows(admin_tables.controlled_shutdowns(events(spark, ROWS)))
    expected = [(b, at(first), n, outcome, at(end), line) for b, first, n, outcome, end, line in EXPECTED]
    assert [(r["broker_id"], r["requested_at"], r["attempts"], r["outcome"], r["ended_at"], r["line_number"])
            for r in table] == expected
    assert all(r["last_attempt_at"] is None and r["duration_ms"] is None for r in table if r["attempts"] == 0)
    incidents = [(b, when) for b, when, _ in _shutdown_incidents(spark, ROWS)]
    assert incidents == [(b, at(first)) for b, first, *_ in EXPECTED]


def _m(ms: int, kind: str, n: int, f: str = "b2/server.log", **kw: object) -> dict[str, object]:
    """A membership row as the job collects it."""
    return {"cluster": kw.pop("cluster", "c"), "ts_ms": T0 + ms, "kind": kind, "broker_id": None, "brokers": None,
            "phase": None, "source_file": f, "line_number": n, **kw}


def test_a_broker_gone_mid_shutdown_it_began_still_failed() -> None:
    """server.log only: broker 2 starts its controlled shutdown at 0, the controller sees it gone at 8 s (its
    session lost mid-shutdown), its "succeeded" comes at 25 s. A start line says only that the broker began one:
    a 0-attempt shutdown excuses a departure only once it ended before it, as without the start line."""
    tenures = [_tenure(1, 1, T0 - 1000, T0 + 200_000)]
    classify(tenures)
    base = [_m(8_000, "broker_change", 2, f="c/controller.log", brokers=[2], added_brokers=[], live_brokers=[1]),
            _m(25_000, "controlled_shutdown_end", 3, broker_id=2, phase="succeeded")]
    with_start = [_m(0, SHUTDOWN_START, 1, broker_id=2), *base]
    assert [f["broker_id"] for f in broker_failures(base, tenures)] == [2]
    assert [f["broker_id"] for f in broker_failures(with_start, tenures)] == [2]
    # and one that ended before the controller saw it go is still a clean stop
    clean = [_m(0, SHUTDOWN_START, 1, broker_id=2), _m(5_000, "controlled_shutdown_end", 3, broker_id=2,
                                                       phase="succeeded"), {**base[0], "ts_ms": T0 + 8_000}]
    assert broker_failures(clean, tenures) == []


def test_the_start_of_a_life_that_crashed_is_not_taken_across_its_registration() -> None:
    """Broker 2 starts a controlled shutdown at 0 and is killed (no end line); the controller sees it gone at 9 s;
    it registers again at 30 s; at 90 s a "succeeded" whose own start line is not in the logs read (rotated). The
    crashed life's start is no start of this stop: the 9 s crash stays a failure."""
    tenures = [_tenure(1, 1, T0 - 1000, T0 + 200_000)]
    classify(tenures)
    rows = [_m(0, SHUTDOWN_START, 1, broker_id=2),
            _m(9_000, "broker_change", 2, f="c/controller.log", brokers=[2], added_brokers=[], live_brokers=[1]),
            _m(30_000, "broker_change", 3, f="c/controller.log", brokers=[], added_brokers=[2], live_brokers=[1, 2]),
            _m(90_000, "controlled_shutdown_end", 4, broker_id=2, phase="succeeded")]
    assert [int(s["first_ms"]) - T0 for s in shutdown_spans(rows)] == [90_000]
    assert [f["broker_id"] for f in broker_failures(rows, tenures)] == [2]


def test_one_server_log_read_twice_is_two_rows_and_two_incidents(spark) -> None:
    """One broker's server.log read twice (the file and the container's stdout): both "succeeded" lines are
    unclaimed and take the same start line. The driver's spans (incidents) and the table agree: two, as without
    the start lines (the table once grouped the two into one, both keyed by the start's file:line)."""
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    rows = []
    for f in ("b2/server.log", "b2/stdout.log"):
        rows += [dict(ms=0, kind=SHUTDOWN_START, broker_id=2, source_file=f, line_number=1),
                 dict(ms=30, kind="controlled_shutdown_end", broker_id=2, phase="succeeded", source_file=f,
                      line_number=2)]
    membership = [_m(r["ms"], r["kind"], r["line_number"], f=r["source_file"], broker_id=2, phase=r.get("phase"))
                  for r in rows]
    spans = sorted((int(s["first_ms"]) - T0, s["row"]["source_file"]) for s in shutdown_spans(membership))
    table = sorted((r["requested_at"], r["source_file"], r["line_number"])
                   for r in admin_tables.controlled_shutdowns(events(spark, rows)).collect())
    assert spans == [(0, "b2/stdout.log"), (0, "b2/stdout.log")]  # the latest start by (ms, file, line)
    assert table == [(at(0), "b2/stdout.log", 1), (at(0), "b2/stdout.log", 1)]


# timestamps clustered on the rules' boundaries: SKEW 1 s, GAP 15 s, END 120 s, START 300 s
_BASES = (0, 1_000, 15_000, 16_000, 120_000, 121_000, 135_000, 300_000, 301_000, 420_000)


def _random_log(seed: int) -> list[dict[str, object]]:
    """One cluster's boundary-heavy membership rows: requests, end lines, registrations, diffs and start lines."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for line in range(1, rng.randrange(2, 40)):
        ts = T0 + rng.choice(_BASES) + rng.choice((-1, 0, 0, 1, -1_000, 1_000))
        broker, c = rng.randrange(1, 3), rng.random()
        row = _m(ts - T0, "", line, f=rng.choice(("a.log", "b.log")), cluster=f"s{seed}")
        if c < 0.25:
            row.update(kind="controlled_shutdown", broker_id=broker)
        elif c < 0.5:
            row.update(kind="controlled_shutdown_end", broker_id=broker, phase=rng.choice(SAID))
        elif c < 0.55:
            row.update(kind="controlled_shutdown_end", phase="removed", brokers=rng.sample([1, 2], rng.randrange(3)))
        elif c < 0.65:
            row.update(kind="broker_registered", brokers=[broker])
        elif c < 0.72:
            row.update(kind="broker_change", brokers=[], added_brokers=[broker], live_brokers=[1, 2])
        else:
            row.update(kind=SHUTDOWN_START, broker_id=broker)
        rows.append(row)
    return rows


def test_the_table_and_the_driver_agree_on_random_logs(spark) -> None:
    """``controlled_shutdowns`` (Spark) and ``shutdown_spans`` (driver: incidents, broker failures) give the same
    shutdowns, requested at the same line, on boundary-heavy logs with start lines (one cluster per seed)."""
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    membership = [r for seed in range(300) for r in _random_log(seed)]
    rows = [{k: v for k, v in r.items() if k != "ts_ms"} | {"ms": int(r["ts_ms"]) - T0} for r in membership]
    table = Counter((r["cluster"], r["broker_id"], r["requested_at"], r["attempts"], r["outcome"], r["ended_at"],
                     r["source_file"], r["line_number"])
                    for r in admin_tables.controlled_shutdowns(events(spark, rows)).collect())
    driver = Counter((s["cluster"], s["broker_id"], at(int(s["first_ms"]) - T0), s["attempts"], s["outcome"],
                      None if s["ended_ms"] is None else at(int(s["ended_ms"]) - T0), s["row"]["source_file"],
                      s["row"]["line_number"]) for s in shutdown_spans(membership))
    begun = [s for s in shutdown_spans(membership) if not s["attempts"] and s["first_ms"] != s["ended_ms"]]
    assert len(begun) > 30  # many server.log-only stops that took a start line
    assert table == driver, (sorted(table - driver)[:5], sorted(driver - table)[:5])


def test_start_lines_are_read_by_a_window_not_a_join(spark) -> None:
    """Every unclaimed end line joined with every start line of its broker was quadratic in a broker's restarts;
    the start is now the latest of a window per (cluster, broker). The plan's joins are equi-joins of one
    shutdown's own rows: its outcome back to it (twice: the table and the leader moves' windows read it), its
    leader-move count back to it."""
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    rows = []
    for i in range(200):
        rows += [dict(ms=i * 60_000, kind=SHUTDOWN_START, broker_id=2),
                 dict(ms=i * 60_000 + 30, kind="controlled_shutdown_end", broker_id=2, phase="succeeded")]
    table = admin_tables.controlled_shutdowns(events(spark, rows))
    plan = table._jdf.queryExecution().optimizedPlan().toString()
    assert sum(1 for line in plan.splitlines() if "Join " in line) == 3, plan
    assert sorted(r["requested_at"] for r in table.collect()) == [at(i * 60_000) for i in range(200)]


def test_the_kraft_notice_is_a_step_of_the_shutdown_not_its_start(spark) -> None:
    """Kafka 3.4+ in migration logs "Starting controlled shutdown", then "Notifying KRaft of controlled shutdown"
    (``controlled_shutdown_started``, phase ``kraft_notified``): a server.log-only stop is requested at the first,
    in the table and the driver's spans alike, not at the notice a few ms later."""
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables
    from zkcontroller.analytics.kafka_log_parser import KafkaLogParser

    lines = ["[2023-06-01 10:00:00,000] INFO [KafkaServer id=2] Starting controlled shutdown "
             "(kafka.server.KafkaServer)",
             "[2023-06-01 10:00:00,004] INFO [KafkaServer id=2] Notifying KRaft of controlled shutdown "
             "(kafka.server.KafkaServer)",
             "[2023-06-01 10:00:00,030] INFO [KafkaServer id=2] Controlled shutdown request returned successfully "
             "after 25ms (kafka.server.KafkaServer)"]
    parsed = [KafkaLogParser().parse_line(n, line) for n, line in enumerate(lines, start=1)]
    assert [(p.kind, p.fields.get("phase")) for p in parsed] == [
        (SHUTDOWN_START, None), (SHUTDOWN_START, "kraft_notified"), ("controlled_shutdown_end", "succeeded")]
    rows = [dict(ms=ms, kind=p.kind, broker_id=2, phase=p.fields.get("phase"), line_number=n)
            for n, (ms, p) in enumerate(zip((0, 4, 30), parsed, strict=True), start=1)]
    membership = [_m(r["ms"], r["kind"], r["line_number"], broker_id=2, phase=r["phase"]) for r in rows]
    assert [(int(s["first_ms"]) - T0, s["row"]["line_number"]) for s in shutdown_spans(membership)] == [(0, 1)]
    table = admin_tables.controlled_shutdowns(events(spark, rows)).collect()
    assert [(r["requested_at"], r["line_number"], r["outcome"]) for r in table] == [(at(0), 1, "succeeded")]


def test_a_registration_bounds_start_lines_with_a_second_of_clock_slack(spark) -> None:
    """A registration is the controller's line (its clock), a start line the broker's: a start 500 ms after the
    controller saw broker 2 register again may be the crashed life's with the broker's clock ahead, so it is not
    taken (the stop is requested at its end line); broker 3's start 1.1 s after its registration is; broker 4's end
    line, 500 ms after its registration, takes no start from before it. The driver's spans and the table agree."""
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    rows = [dict(ms=2_000, kind="broker_registered", brokers=[2], source_file="c/controller.log", line_number=1),
            dict(ms=2_500, kind=SHUTDOWN_START, broker_id=2, source_file="b2/server.log", line_number=2),
            dict(ms=9_000, kind="controlled_shutdown_end", broker_id=2, phase="succeeded", source_file="b2/server.log",
                 line_number=3),
            dict(ms=2_000, kind="broker_registered", brokers=[3], source_file="c/controller.log", line_number=4),
            dict(ms=3_100, kind=SHUTDOWN_START, broker_id=3, source_file="b3/server.log", line_number=5),
            dict(ms=9_000, kind="controlled_shutdown_end", broker_id=3, phase="succeeded", source_file="b3/server.log",
                 line_number=6),
            # broker 4: a crashed life's start, then the registration, then an end line within the second after it
            # (its own start line rotated away): the registration still bounds it, whatever the slack
            dict(ms=0, kind=SHUTDOWN_START, broker_id=4, source_file="b4/server.log", line_number=7),
            dict(ms=60_000, kind="broker_registered", brokers=[4], source_file="c/controller.log", line_number=8),
            dict(ms=60_500, kind="controlled_shutdown_end", broker_id=4, phase="succeeded",
                 source_file="b4/server.log", line_number=9)]
    membership = [_m(r["ms"], r["kind"], r["line_number"], f=r["source_file"], broker_id=r.get("broker_id"),
                     brokers=r.get("brokers"), phase=r.get("phase")) for r in rows]
    expected = [(2, 9_000, 3), (3, 3_100, 5), (4, 60_500, 9)]
    assert [(s["broker_id"], int(s["first_ms"]) - T0, s["row"]["line_number"])
            for s in shutdown_spans(membership)] == expected
    table = admin_tables.controlled_shutdowns(events(spark, rows)).collect()
    assert sorted((r["broker_id"], r["requested_at"], r["line_number"]) for r in table) == [
        (b, at(ms), n) for b, ms, n in expected]
