"""``controller_timeline.shutdown_spans``: the same spans as the first, quadratic version (kept here as the
reference), at O(n log n) work, and computed once per job for broker failures and incidents alike."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import pytest
from tests.analytics.test_controller_timeline import _end, _shutdown, _tenure

from zkcontroller.analytics import controller_timeline as ct
from zkcontroller.analytics.controller_timeline import (
    SAID,
    SHUTDOWN_END,
    SHUTDOWN_END_MS,
    SHUTDOWN_END_SKEW_MS,
    SHUTDOWN_GAP_MS,
    broker_failures,
    classify,
    ends_shutdown,
    shutdown_spans,
)


def _reference_spans(membership: list[dict[str, object]]) -> list[dict[str, object]]:
    """``shutdown_spans`` as it was before it was made O(n log n): every end line tested against every shutdown of
    its broker (the rule written out, not ``ends_shutdown``). The specification the faster version must meet
    exactly."""
    marks: dict[tuple[object, int], list[tuple[int, str, int, bool, dict[str, object]]]] = defaultdict(list)
    said: list[dict[str, object]] = []
    ends: dict[tuple[object, int], list[tuple[int, str | None]]] = defaultdict(list)
    for r in membership:
        kind, where = r["kind"], (int(r["ts_ms"]), str(r["source_file"]), int(r["line_number"]))
        if kind == "controlled_shutdown" and r.get("broker_id") is not None:
            marks[(r["cluster"], int(r["broker_id"]))].append((*where, True, r))
            continue
        if kind == SHUTDOWN_END and r.get("phase") in SAID and r.get("broker_id") is not None:
            said.append(r)
            ends[(r["cluster"], int(r["broker_id"]))].append((int(r["ts_ms"]), str(r["phase"])))
            continue
        back = (r.get("brokers") or ([r["broker_id"]] if r.get("broker_id") is not None else [])
                if kind == "broker_registered" else r.get("added_brokers") if kind == "broker_change"
                else r.get("brokers") if kind == SHUTDOWN_END and r.get("phase") == "removed" else None)
        for broker in back or []:
            marks[(r["cluster"], int(broker))].append((*where, False, r))
            if kind == SHUTDOWN_END:
                ends[(r["cluster"], int(broker))].append((int(r["ts_ms"]), None))
    spans: list[dict[str, object]] = []
    for (cluster, broker), rows in marks.items():
        rows.sort(key=lambda m: m[:3])
        mine: list[dict[str, object]] = []
        previous = None
        for m in rows:
            if m[3]:
                if previous is not None and previous[3] and m[0] - previous[0] <= SHUTDOWN_GAP_MS:
                    mine[-1]["last_ms"], mine[-1]["attempts"] = m[0], int(mine[-1]["attempts"]) + 1
                else:
                    mine.append({"cluster": cluster, "broker_id": broker, "first_ms": m[0], "last_ms": m[0],
                                 "attempts": 1, "row": m[4]})
            previous = m
        registered = [m[0] for m in rows if not m[3] and m[4]["kind"] != SHUTDOWN_END]
        for span in mine:
            span["claimed_ends"] = []
        for e in ends[(cluster, broker)]:
            # the latest shutdown requested by the line's time, if still open (not past the retries' reach, the
            # broker not registered again since its last attempt); else the next one, if requested within the clock
            # slack after the line and the broker did not register in between
            begun = [s for s in mine if int(s["first_ms"]) <= e[0]]
            later = [s for s in mine if int(s["first_ms"]) > e[0]]
            if begun and e[0] <= int(begun[-1]["last_ms"]) + SHUTDOWN_END_MS and not any(
                    int(begun[-1]["last_ms"]) < r <= e[0] for r in registered):
                begun[-1]["claimed_ends"].append(e)
            elif later and e[0] >= int(later[0]["first_ms"]) - SHUTDOWN_END_SKEW_MS and not any(
                    e[0] <= r < int(later[0]["first_ms"]) for r in registered):
                later[0]["claimed_ends"].append(e)
        for span in mine:
            claimed = sorted(span.pop("claimed_ends"), key=lambda e: (e[0], e[1] or ""))
            outcomes = [e for e in claimed if e[1] is not None]
            span["ended_ms"] = claimed[0][0] if claimed else None
            span["outcome"] = outcomes[-1][1] if outcomes else None
            succeeded = [e[0] for e in outcomes if e[1] == "succeeded"]
            span["succeeded_ms"] = succeeded[-1] if succeeded else None
            span["claimed"] = {e[0] for e in outcomes}
        spans += mine
    claimed_by: dict[tuple[object, int], set[int]] = defaultdict(set)
    for span in spans:
        claimed_by[(span["cluster"], span["broker_id"])] |= span.pop("claimed")
    for r in said:
        key = (r["cluster"], int(r["broker_id"]))
        if int(r["ts_ms"]) not in claimed_by[key]:
            ts = int(r["ts_ms"])
            spans.append({"cluster": r["cluster"], "broker_id": key[1], "first_ms": ts, "last_ms": ts, "attempts": 0,
                          "row": r, "ended_ms": ts, "outcome": r["phase"],
                          "succeeded_ms": ts if r["phase"] == "succeeded" else None})
    return sorted(spans, key=lambda s: (str(s["cluster"]), s["broker_id"], s["first_ms"]))


def _removed(ts: int, brokers: list[int], line: int) -> dict[str, object]:
    return {"cluster": "c", "ts_ms": ts, "kind": SHUTDOWN_END, "broker_id": None, "brokers": brokers,
            "phase": "removed", "source_file": "c/controller.log", "line_number": line}


def _registered(ts: int, broker: int, line: int) -> dict[str, object]:
    return {"cluster": "c", "ts_ms": ts, "kind": "broker_registered", "broker_id": None, "brokers": [broker],
            "source_file": "c/controller.log", "line_number": line}


# The membership of the timeline tests' shutdown cases (test_controller_timeline.py), and edge cases: ties of
# one ms, end lines on the window's bounds, two shutdowns starting in one ms, an empty "Removed ArrayBuffer()".
FIXTURES = [
    [_shutdown(990, 1, 5), _shutdown(100_000, 2, 20), _shutdown(110_000, 4, 30)],
    [_shutdown(100_000, 2, 20), _shutdown(105_000, 2, 21), _end(115_400, 2, "failed", 7),
     _shutdown(100_000, 3, 23), _end(100_020, 3, "succeeded", 3),
     _end(50_000, 4, "failed", 4), _shutdown(120_000, 4, 24), _end(120_010, 4, "succeeded", 5),
     _end(120_000, 5, "succeeded", 9)],
    [_shutdown(10_000, 2, 20), _removed(70_001, [2], 22)],
    [_shutdown(100_000, 2, 20), _shutdown(105_000, 2, 21), _shutdown(110_000, 2, 22), _end(117_000, 2, "failed", 7),
     _shutdown(200_000, 3, 24), _end(200_020, 3, "succeeded", 3), _end(400_000, 3, "failed", 4)],
    [_shutdown(742, 2, 20), _end(746, 2, "succeeded", 3)],
    [_shutdown(0, 2, 20), _removed(5, [2], 21), _end(5, 2, "succeeded", 3)],
    [_shutdown(0, 2, 1), _end(0, 2, "failed", 2), _end(0, 2, "succeeded", 3)],
    [_shutdown(1_000, 2, 1), _end(0, 2, "succeeded", 2), _end(-1, 2, "failed", 3),
     _shutdown(30_000, 2, 4), _end(29_000, 2, "failed", 5), _end(28_999, 2, "succeeded", 6),
     _end(150_000, 2, "failed", 7), _end(150_001, 2, "succeeded", 8)],
    [_shutdown(5_000, 2, 1), _registered(5_000, 2, 2), _shutdown(5_000, 2, 3), _end(4_500, 2, "succeeded", 4)],
    [_shutdown(0, 2, 1), _removed(10, [], 2), _end(20, 2, "succeeded", 3)],
    # a fast stop-start-stop (the demo's broker 1), the second stop's request within the clock slack of the first
    # stop's "succeeded"; a "succeeded" after a registration (no request of its own read); a registration between
    # a line and the request just after it; our brokers' give-up line
    [_shutdown(1_309, 1, 1), _end(1_323, 1, "succeeded", 2), _registered(1_358, 1, 3), _shutdown(1_476, 1, 4),
     _shutdown(9_000, 2, 5), _registered(9_100, 2, 6), _end(9_200, 2, "succeeded", 7),
     _end(20_000, 3, "failed", 8), _registered(20_100, 3, 9), _shutdown(20_500, 3, 10),
     _shutdown(30_000, 4, 11), _end(30_010, 4, "unclean", 12)],
]


def _random_membership(seed: int) -> list[dict[str, object]]:
    """Shutdowns, retries, registrations, removals and broker lines of a few brokers and clusters, close enough
    together that windows meet, lines share milliseconds and end lines fall on every side of a window."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for line in range(rng.randrange(1, 120)):
        ts, broker = rng.randrange(0, 400_000, rng.choice((1, 500, 5_000))), rng.randrange(1, 4)
        choice = rng.random()
        if choice < 0.4:
            row = _shutdown(ts, broker, line)
        elif choice < 0.7:
            row = _end(ts, broker, rng.choice(SAID), line)
        elif choice < 0.8:
            row = _removed(ts, rng.sample(range(1, 4), rng.randrange(0, 3)), line)
        else:
            row = _registered(ts, broker, line)
        rows.append({**row, "cluster": rng.choice(("c", "c", "d"))})
    return rows


def _comparable(spans: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(s["cluster"], s["broker_id"], s["first_ms"], s["last_ms"], s["attempts"], s["ended_ms"], s["outcome"],
             s["succeeded_ms"], s["row"]["source_file"], s["row"]["line_number"]) for s in spans]


@pytest.mark.parametrize("membership", FIXTURES, ids=[f"fixture-{i}" for i in range(len(FIXTURES))])
def test_the_spans_are_the_reference_ones_on_the_fixtures(membership: list[dict[str, object]]) -> None:
    assert _comparable(shutdown_spans(membership)) == _comparable(_reference_spans(membership))


def test_the_spans_are_the_reference_ones_on_random_logs() -> None:
    for seed in range(300):
        membership = _random_membership(seed)
        assert _comparable(shutdown_spans(membership)) == _comparable(_reference_spans(membership)), seed


def test_twenty_thousand_shutdowns_of_one_broker_test_each_end_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker stopped and restarted 20,000 times (request, its own "succeeded", registered again): each end line
    is tested against one shutdown, not all of them. The counter gives up at once past the bound, so the
    quadratic version (400 million tests) fails fast here instead of running for minutes."""
    shutdowns = 20_000
    membership: list[dict[str, object]] = []
    for i in range(shutdowns):
        at = i * 60_000
        membership += [_shutdown(at, 2, 3 * i), _end(at + 20, 2, "succeeded", 3 * i + 1),
                       _registered(at + 30_000, 2, 3 * i + 2)]
    ends = shutdowns  # the broker's "succeeded" lines (a registration ends a shutdown, but is no end line)
    calls = 0

    def counted(*args: object) -> object:
        nonlocal calls
        calls += 1
        if calls > ends:
            raise AssertionError(f"more than {ends} end-line tests for {ends} end lines: quadratic")
        return ends_shutdown(*args)

    monkeypatch.setattr(ct, "ends_shutdown", counted)
    spans = shutdown_spans(membership)
    assert len(spans) == shutdowns
    assert all(s["attempts"] == 1 and s["outcome"] == "succeeded" for s in spans)
    assert calls == ends


def test_broker_failures_take_the_spans_given_instead_of_computing_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job computes the spans once and hands them to ``broker_failures`` and ``incident_rows``."""
    tenures = [_tenure(1, 1, 0, 200_000)]
    classify(tenures)
    gone = {"cluster": "c", "kind": "broker_change", "added_brokers": [], "live_brokers": [1],
            "source_file": "c/controller.log"}
    membership = [*FIXTURES[1], {**gone, "ts_ms": 119_000, "brokers": [2], "line_number": 22},
                  {**gone, "ts_ms": 121_000, "brokers": [3, 4, 5], "line_number": 25}]
    expected = broker_failures(membership, tenures)
    spans = shutdown_spans(membership)

    def refuse(_: object) -> object:
        raise AssertionError("shutdown_spans computed again")

    monkeypatch.setattr(ct, "shutdown_spans", refuse)
    assert broker_failures(membership, tenures, spans=spans) == expected
    assert [f["broker_id"] for f in expected] == [2]


@pytest.mark.spark
def test_the_job_computes_the_spans_once(spark, samples: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """One job on a broker's server.log and a controller log: one ``shutdown_spans`` call for both tables."""
    from zkcontroller.analytics import timeline_tables
    from zkcontroller.analytics.job import JobConfig, run

    calls = []
    real = ct.shutdown_spans

    def counted(membership: list[dict[str, object]]) -> list[dict[str, object]]:
        calls.append(len(membership))
        return real(membership)

    monkeypatch.setattr(ct, "shutdown_spans", counted)
    monkeypatch.setattr(timeline_tables, "shutdown_spans", counted)
    inputs = [str(samples / "44-choopong-1.1-server-zk-expiry-controlled-shutdown.log"),
              str(samples / "10-choopong-1.1-controller-broker-failure.log")]
    result = run(spark, JobConfig(inputs=inputs, out=tmp_path / "out", report=False))
    assert result.rows["controlled_shutdowns"] >= 1
    assert len(calls) == 1


def _restarts_of_one_broker(restarts: int) -> list[dict[str, object]]:
    """Broker 2 stopped ``restarts`` times 200 s apart (rows as ``test_transform.events`` takes them): 1 to 3
    attempts 5 s apart, two leader moves in the tail and one after it, ended by its "succeeded", its "failed" 20 s
    later, the controller's "Removed", or nothing; registered again 40 s in; every fifth stop followed by a
    "succeeded" 150 s in, which no request claims (more than 120 s after the last attempt: a stop whose controller's
    log was not read)."""
    move = dict(kind="leader_election", strategy="controlled_shutdown", old_leader=2, topic="t")
    end = dict(kind=SHUTDOWN_END)
    rows: list[dict[str, object]] = []
    for i in range(restarts):
        first = i * 200_000
        last = first + 5_000 * (i % 3)
        rows += [dict(ms=first + 5_000 * a, kind="controlled_shutdown", broker_id=2, controller_epoch=1)
                 for a in range(i % 3 + 1)]
        rows += [{**move, "ms": first + 3, "partition": 0}, {**move, "ms": last + 4, "partition": 1},
                 {**move, "ms": last + 6_000, "partition": 2}]  # after the 5 s tail: no move of this stop's
        rows += [[{**end, "ms": last + 20, "broker_id": 2, "phase": "succeeded"}],
                 [{**end, "ms": last + 20_000, "broker_id": 2, "phase": "failed"}],
                 [{**end, "ms": last + 10, "brokers": [2], "phase": "removed"}], []][i % 4]
        rows.append(dict(ms=first + 40_000, kind="broker_registered", brokers=[2]))
        if i % 5 == 0:
            rows.append({**end, "ms": first + 150_000, "broker_id": 2, "phase": "succeeded"})
    return rows


@pytest.mark.spark
def test_the_table_matches_many_restarts_of_one_broker_without_a_join_per_broker(spark) -> None:
    """``admin_tables.controlled_shutdowns`` on 300 restarts of one broker: the same shutdowns, outcomes and end
    lines as the driver's spans, each stop's two moves in its tail, and no join of every end line or leader move
    with every shutdown of its broker (quadratic in its restarts): the plan's joins are equi-joins only, each
    line finding its shutdown by a window over the broker's rows in time order."""
    from tests.analytics.test_transform import T0, at, events

    from zkcontroller.analytics import admin_tables

    restarts = 300
    rows = _restarts_of_one_broker(restarts)
    table = admin_tables.controlled_shutdowns(events(spark, rows))
    plan = table._jdf.queryExecution().optimizedPlan().toString()
    joins = [line for line in plan.splitlines() if "Join " in line]
    assert joins and not [j for j in joins if any(op in j for op in (" < ", " <= ", " > ", " >= "))], joins
    got = table.collect()
    membership = [{"cluster": "c", "source_file": "f.log", "line_number": n, "brokers": None, "broker_id": None,
                   "phase": None, **{k: v for k, v in row.items() if k != "ms"}, "ts_ms": T0 + int(row["ms"])}
                  for n, row in enumerate(rows, start=1) if row["kind"] != "leader_election"]
    driver = sorted((at(int(s["first_ms"]) - T0), s["attempts"], s["outcome"],
                     None if s["ended_ms"] is None else at(int(s["ended_ms"]) - T0))
                    for s in shutdown_spans(membership))
    assert sorted((r["requested_at"], r["attempts"], r["outcome"], r["ended_at"]) for r in got) == driver
    asked = sorted((r for r in got if r["attempts"]), key=lambda r: r["requested_at"])
    assert [(r["requested_at"], r["attempts"], r["leaders_moved"]) for r in asked] == [
        (at(i * 200_000), i % 3 + 1, 2) for i in range(restarts)]
    assert [r["outcome"] for r in asked[:4]] == ["succeeded", "failed", None, None]
    assert sum(1 for r in got if not r["attempts"]) == restarts // 5
