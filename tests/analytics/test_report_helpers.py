"""The report's helpers, without Spark: epoch milliseconds, episodes, and the first rows a page shows."""

from __future__ import annotations

import itertools
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from zkcontroller.analytics import report
from zkcontroller.analytics.report import (
    MARKER_SLOTS,
    _head,
    _isr_summary,
    _marker_positions,
    _ms,
    _spaced,
    _table,
    _to_pandas,
    episodes,
)

INSTANTS_MS = [1_700_000_000_123, 1_700_000_000_001, 1_099_511_627_777, 86_399_999, -8_190]  # and before 1970


def test_ms_is_exact_for_parquet_timestamps_read_as_the_report_reads_them() -> None:
    table = pa.table({"at": pa.array(INSTANTS_MS, pa.timestamp("ms", tz="UTC"))})
    series = table.to_pandas(types_mapper=pd.ArrowDtype)["at"]
    assert _ms(series) == INSTANTS_MS
    assert _ms(table.to_pandas()["at"]) == INSTANTS_MS  # numpy datetime64[ms, UTC]


def test_ms_accepts_naive_and_microsecond_timestamps() -> None:
    naive = pd.Series(pd.to_datetime(INSTANTS_MS, unit="ms"))
    assert _ms(naive) == INSTANTS_MS
    micro = pd.Series(pd.to_datetime([1_700_000_000_123_999], unit="us", utc=True))
    assert _ms(micro) == [1_700_000_000_123]  # floored to the millisecond, as the tables' ms columns are
    assert _ms(pd.Series([], dtype="datetime64[ns, UTC]")) == []


def test_episodes_split_on_long_quiet_gaps() -> None:
    hour = 3_600_000
    points = [10 * hour + 500, 0, 1_000, 2_000, 10 * hour]  # unsorted: the report passes them as found
    # gap = max(1 min, window / 10) = 1 h; each episode padded by max(span / 20, 50 ms)
    assert episodes(points, (0, 10 * hour + 1_000)) == [(-100, 2_100), (10 * hour - 50, 10 * hour + 550)]
    assert episodes([], (5, 5)) == [(5, 6)]


def _partitioned(root: Path, rows: dict[str, pa.Table]) -> Path:
    """A table laid out as Spark's ``partitionBy("cluster")`` writes it (hive directories, no cluster column)."""
    for cluster, table in rows.items():
        part = root / f"cluster={quote(cluster, safe='')}"
        part.mkdir(parents=True)
        pq.write_table(table, part / "part-00000.parquet")
    (root / "_SUCCESS").touch()
    return root


def _elections(n: int, start: int) -> pa.Table:
    return pa.table({
        "elected_at": pa.array([pd.Timestamp(start + (i % 7), unit="ms") for i in range(n)], pa.timestamp("us")),
        "topic": pa.array([None if i % 5 == 0 else f"t{i % 3}" for i in range(n)], pa.string()),
        "partition": pa.array([i for i in range(n)], pa.int32()),
        "new_leader": pa.array([None if i % 4 == 0 else i % 3 for i in range(n)], pa.int32()),
    })


def test_head_shows_the_first_rows_of_one_cluster_sorted_as_the_whole_table_would_be(tmp_path: Path) -> None:
    mine, other = _elections(450, 1_000), _elections(30, 0)
    out = tmp_path / "out"
    _partitioned(out / "leader_elections", {"prod:a/b": mine, "other": other})
    order = ("elected_at", "topic", "partition")
    head, total = _head(out, "leader_elections", "prod:a/b", order, limit=50)
    whole = _to_pandas(mine).sort_values(list(order), kind="stable")  # nulls last
    assert total == 450
    assert head.to_dict("records") == whole.head(50).to_dict("records")
    assert str(head["new_leader"].dtype) == "Int32" and head["new_leader"].isna().any()  # no float ids
    html = _table(head, limit=50, total=total)
    assert "400 more row(s)" in html
    assert _head(out, "leader_elections", "nowhere", order)[1] == 0


def test_head_and_isr_summary_of_empty_or_missing_tables(tmp_path: Path) -> None:
    empty = tmp_path / "isr_changes"
    empty.mkdir()
    (empty / "_SUCCESS").touch()  # what Spark leaves for a table without rows
    head, total = _head(tmp_path, "isr_changes", "c", ("changed_at",))
    assert head.empty and total == 0
    assert _head(tmp_path, "anomalies", "c", ("detected_at",))[1] == 0
    assert "No ISR change" in _isr_summary(tmp_path, "c")


def test_isr_summary_counts_each_kind_of_change_of_the_cluster_only(tmp_path: Path) -> None:
    def changes(kinds: list[tuple[str, str]]) -> pa.Table:
        return pa.table({"by": [b for b, _ in kinds], "change": [c for _, c in kinds]})

    _partitioned(tmp_path / "isr_changes", {
        "c": changes([("leader", "shrink")] * 3 + [("leader", "expand")] * 2 + [("controller", "shrink")]),
        "d": changes([("leader", "shrink")] * 9)})
    assert _isr_summary(tmp_path, "c") == (
        '<p class="note">1 shrink by the controller, 2 expand by the leader, 3 shrink by the leader.</p>')


def test_marker_positions_thin_overplotted_markers_without_moving_any_visibly() -> None:
    few = np.array([0.1, 0.5, 0.5])
    assert _marker_positions(few, 0.0, 1.0) is few  # below the slot count: drawn as given
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.uniform(10.0, 11.0, 200_000), rng.uniform(10.5, 10.5001, 50_000)])
    thinned = _marker_positions(xs, 10.0, 11.0)
    slot = 1.0 / MARKER_SLOTS
    assert len(thinned) <= MARKER_SLOTS
    # every marker drawn stands within half a slot of a marker it replaces, and every marker has one that near
    assert _nearest_distance(thinned, xs).max() <= slot / 2 + 1e-12
    assert _nearest_distance(xs, thinned).max() <= slot / 2 + 1e-12


def _nearest_distance(points: np.ndarray, to: np.ndarray) -> np.ndarray:
    """For each of ``points``, the distance to the nearest of ``to``."""
    ordered = np.sort(to)
    at = np.clip(np.searchsorted(ordered, points), 1, len(ordered) - 1)
    return np.minimum(np.abs(points - ordered[at - 1]), np.abs(points - ordered[at]))


def test_spaced_keeps_labels_at_least_a_gap_apart_in_time_order() -> None:
    assert _spaced([0.0, 1.0, 2.0, 10.0, 10.5, 21.0], 5.0) == [0, 3, 5]
    assert _spaced([], 5.0) == []
    assert _spaced([3.0, 3.0, 3.0], 0.0) == [0, 1, 2]  # no width: every label


def test_timeline_epoch_labels_never_overlap_and_a_sparse_lane_keeps_all(monkeypatch) -> None:
    """800 tenures in two lanes, as a 10M-line log has: the drawn epoch labels do not overlap on screen; a lane
    of a few far-apart tenures keeps every label."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    start = pd.Timestamp("2023-11-14 22:00", tz="UTC")
    crowded = [(1 + i % 2, i, start + pd.Timedelta(seconds=20 * i)) for i in range(800)]
    sparse = [(3, 900 + i, start + pd.Timedelta(hours=i)) for i in range(4)]
    rows = [*crowded, *sparse]
    tenures = pd.DataFrame({
        "controller_id": [c for c, _, _ in rows], "controller_epoch": [e for _, e, _ in rows],
        "start_at": [s for _, _, s in rows], "end_at": [s + pd.Timedelta(seconds=15) for _, _, s in rows]})
    lo, hi = int(start.value // 10**6), int((start + pd.Timedelta(hours=4)).value // 10**6)
    report.plot_timeline(tenures, pd.DataFrame(), [(lo, hi)])
    (fig,) = figures
    renderer = fig.canvas.get_renderer()
    labels = [t for t in fig.axes[0].texts if t.get_text().startswith("e")]
    by_lane: dict[float, list] = {}
    for t in labels:
        by_lane.setdefault(t.xy[1], []).append(t.get_window_extent(renderer))
    for boxes in by_lane.values():
        boxes.sort(key=lambda b: b.x0)
        assert all(a.x1 <= b.x0 for a, b in itertools.pairwise(boxes)), "overlapping epoch labels"
    assert 20 < len(labels) < 800
    assert {t.get_text() for t in labels} >= {f"e{900 + i}" for i in range(4)}

def test_a_rerun_into_the_same_out_leaves_no_page_of_a_cluster_it_does_not_have(tmp_path: Path) -> None:
    """A second run (other inputs, or --cluster-pattern splitting one cluster into several) used to leave the
    first run's cluster pages beside its own, unlinked and out of date."""
    from types import SimpleNamespace

    from zkcontroller.analytics.report import write_report

    config = SimpleNamespace(inputs=["logs"])
    write_report(tmp_path, {}, config, [], windows={"samples": (0, 1_000)})
    (tmp_path / "report" / "notes.txt").write_text("not ours")
    write_report(tmp_path, {}, config, [], windows={"prod": (0, 1_000), "staging": (0, 1_000)})
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["notes.txt", "prod.html", "staging.html"]


def test_clusters_whose_names_differ_only_in_unsafe_characters_get_pages_of_their_own(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from zkcontroller.analytics.report import slug, write_report

    names = ["eu/prod", "eu prod", "eu_prod", ""]
    assert len({slug(n) for n in names}) == len(names)
    assert slug("prod") == "prod" and slug("sim-split-brain-7") == "sim-split-brain-7"
    write_report(tmp_path, {}, SimpleNamespace(inputs=["logs"]), [], windows={n: (0, 1_000) for n in names})
    pages = sorted(p.name for p in (tmp_path / "report").iterdir())
    assert len(pages) == len(names) and not any(p.startswith(".") for p in pages)
    index = (tmp_path / "report.html").read_text()
    assert all(f'href="report/{slug(n)}.html"' in index for n in names)


def test_brokers_leading_as_many_partitions_stay_visible_in_the_series_plot(monkeypatch) -> None:
    """The demo's three brokers each lead 2, then 3 partitions: drawn alike, the last line hid the other two, and
    the plot read as if only broker 3 led anything until the first failover."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    start = 1_700_000_000_000
    series = pd.DataFrame({"broker_id": [b for b in (1, 2, 3) for _ in range(2)],
                           "bucket_ms": [start, start + 50] * 3, "value": [2, 3] * 3})
    report.plot_series(series, "partitions led", "broker_id", [(start, start + 100)])
    (fig,) = figures
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    looks = {(line.get_linestyle(), line.get_linewidth()) for line in lines}
    assert len(looks) == 3, "two brokers' lines are drawn alike: the later one hides the earlier"
    widths = [line.get_linewidth() for line in lines]
    assert widths == sorted(widths, reverse=True), "a later line must be thinner, so the earlier shows around it"


def test_each_broker_failure_and_failover_gets_its_own_bar(monkeypatch) -> None:
    """The demo's broker 2 fails twice within a second (its session expired, then the run's shutdown): both bars
    were labelled "b2 13:26:38", and matplotlib's category axis drew them at one place, one hiding the other."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    at = pd.Timestamp("2026-11-27 13:26:38.808", tz="UTC")
    failures = pd.DataFrame({"broker_id": [1, 2, 3, 2], "duration_ms": [10, 3, 6, 5],
                             "detected_at": [at, at, at + pd.Timedelta(milliseconds=93),
                                             at + pd.Timedelta(milliseconds=102)]})
    tenures = pd.DataFrame({"controller_epoch": [2, 2], "failover_gap_ms": [12.0, 8.0]})  # an epoch reset
    report.plot_handling(tenures, failures)
    (fig,) = figures
    left, right = fig.axes
    assert sorted(p.get_y() for p in right.patches) == sorted({p.get_y() for p in right.patches})
    assert [p.get_width() for p in right.patches] == [10, 3, 6, 5]
    assert len({p.get_y() for p in left.patches}) == 2
    labels = [t.get_text() for t in right.get_yticklabels()]
    assert len(set(labels)) == 4 and labels[1] == "b2 13:26:38.808", labels


def test_a_pages_incident_summary_is_in_words_in_story_order() -> None:
    """The demo's page read "2 broker failure, 3 broker started, 2 failover, 1 first, 3 resigned"."""
    counts = {"broker_failure": 2, "broker_started": 3, "failover": 2, "first": 1, "resigned": 3}
    assert report.incident_summary(counts) == (
        "1 first election, 2 failovers, 2 broker failures, 3 broker starts, 3 resignations")
    assert report.incident_summary({"epoch_reset": 1, "split_brain": 1, "something_new": 2}) == (
        "1 epoch reset, 1 split-brain window, 2 something new")
    assert report.incident_summary({}) == "no incident"


def test_a_slots_peak_is_drawn_over_the_slot_only_then_the_level_it_ended_with(monkeypatch) -> None:
    """A partition leaderless for 1 ms, then two seconds without a step: the plot held the slot's peak (1) for
    the two seconds, as if the partition had no leader all along."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    start = 1_700_000_000_000
    series = pd.DataFrame({"bucket_ms": [start, start + 2_000], "value": [1, 1], "end_value": [0, 1],
                           "until_ms": [start + 5, start + 2_005]})
    report.plot_series(series, "partitions without leader", None, [(start, start + 2_005)])
    (fig,) = figures
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_ydata()) == [1, 0, 1, 1]
    x = [pd.Timestamp(v).value // 1_000_000 - start for v in line.get_xdata()]
    assert x == [0, 5, 2_000, 2_005]


def test_markers_closer_than_a_label_share_one_combined_label(monkeypatch) -> None:
    """Two controlled shutdowns 300 ms apart (brokers 1 then 0) drew "b1" and "b0" on top of each other: now one
    label "b1,b0"; a shutdown far from them keeps its own."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    at = pd.Timestamp("2021-04-28 16:12:30.564", tz="UTC")
    tenures = pd.DataFrame({"controller_id": [0], "controller_epoch": [9], "start_at": [at - pd.Timedelta(minutes=5)],
                            "end_at": [at + pd.Timedelta(minutes=5)]})
    times = [at, at + pd.Timedelta(milliseconds=328), at + pd.Timedelta(minutes=4)]
    incidents = pd.DataFrame({"incident": ["controlled_shutdown"] * 3, "at": times, "end_at": [None] * 3,
                              "broker_id": [1, 0, 2]})
    lo = int((at - pd.Timedelta(minutes=5)).value // 10**6)
    report.plot_timeline(tenures, incidents, [(lo, lo + 10 * 60_000)])
    (fig,) = figures
    labels = sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("b"))
    assert labels == ["b1,b0", "b2"]
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in fig.axes[0].texts if t.get_text().startswith("b")),
                   key=lambda b: b.x0)
    assert all(a.x1 <= b.x0 for a, b in itertools.pairwise(boxes)), "overlapping broker labels"


def test_a_series_at_its_peak_stays_below_the_top_border(monkeypatch) -> None:
    """Leaders per broker: a line at its maximum sat on the panel's top border, hard to see."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    start = 1_700_000_000_000
    series = pd.DataFrame({"broker_id": [1, 1, 2, 2], "bucket_ms": [start, start + 50] * 2, "value": [2, 6, 4, 0]})
    report.plot_series(series, "partitions led", "broker_id", [(start, start + 100)])
    (fig,) = figures
    bottom, top = fig.axes[0].get_ylim()
    assert bottom == 0 and top >= 6 * 1.1


def test_a_handling_side_without_data_says_so_instead_of_an_empty_axis(monkeypatch) -> None:
    """No broker failure in the log: the right panel was an empty 0-1 axis labelled "broker failure handling"."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "<img>")
    tenures = pd.DataFrame({"controller_epoch": [2], "failover_gap_ms": [12.0]})
    html_text = report.plot_handling(tenures, pd.DataFrame())
    (fig,) = figures
    assert [ax.get_xlabel() for ax in fig.axes] == ["failover: previous tenure's end to readiness (ms)"]
    assert html_text == '<img><p class="empty">No broker failures in this log.</p>'
    failures = pd.DataFrame({"broker_id": [1], "duration_ms": [10],
                             "detected_at": [pd.Timestamp("2026-11-27 13:26:38.808", tz="UTC")]})
    html_text = report.plot_handling(pd.DataFrame({"controller_epoch": [], "failover_gap_ms": []}), failures)
    assert [ax.get_xlabel() for ax in figures[-1].axes] == ["broker failure handling (ms)"]
    assert html_text.endswith('<p class="empty">No failover in this log.</p>')
