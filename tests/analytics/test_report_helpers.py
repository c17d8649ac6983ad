"""The report's pure helpers, without Spark: timestamps to epoch milliseconds and the episodes drawn."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from zkcontroller.analytics.report import _ms, episodes

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
