"""The report's Arrow->pandas conversion of a page's first rows (``report._to_pandas``) gives the dtypes its
whole-table reads give (``pd.read_parquet(dtype_backend="numpy_nullable")``), through public pandas API only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from zkcontroller.analytics.report import _table, _to_pandas

BIG = 2**53 + 1
"""Not a float: an integer column that went through float64 would print 9007199254740992."""


def _mixed() -> pa.Table:
    return pa.table({
        "broker_id": pa.array([1, None, 3], pa.int32()),
        "ts_ms": pa.array([BIG, None, 0], pa.int64()),
        "ratio": pa.array([2.0, None, 1.0], pa.float64()),  # integral floats stay floats
        "clean": pa.array([True, None, False]),
        "topic": pa.array(["t", None, "u"]),
        "isr": pa.array([[1, 2], None, []], pa.list_(pa.int32())),
        "at": pa.array([0, None, 1_000], pa.timestamp("us", tz="UTC")),
    })


def test_first_rows_have_the_dtypes_of_the_whole_table_reads(tmp_path: Path) -> None:
    table = _mixed()
    pq.write_table(table, tmp_path / "t.parquet")
    whole = pd.read_parquet(tmp_path / "t.parquet", dtype_backend="numpy_nullable")
    head = _to_pandas(table)
    scalars = ["broker_id", "ts_ms", "ratio", "clean", "topic"]
    assert head[scalars].dtypes.to_dict() == whole[scalars].dtypes.to_dict()
    assert [str(head[c].dtype) for c in scalars] == ["Int32", "Int64", "Float64", "boolean", "string"]
    assert str(head["at"].dtype).startswith("datetime64")
    assert head["ts_ms"].iloc[0] == BIG and head["isr"].iloc[0].tolist() == [1, 2]


def test_a_page_prints_integers_as_integers_and_nulls_blank(tmp_path: Path) -> None:
    html = _table(_to_pandas(_mixed()))
    assert f"<td>{BIG}</td>" in html and "<td>2.0</td>" in html and "<td>1</td>" in html
    assert "<td>3</td>" in html and "<td>3.0</td>" not in html and "nan" not in html.lower()


def test_every_null_is_an_empty_cell() -> None:
    """isr_changes.previous_isr is null for a partition's first ISR: its cell read "None"; a null integer's cell
    held a raw ``<NA>`` (an unknown HTML tag that browsers happened to hide)."""
    table = pa.table({"topic": ["t", "t"], "previous_isr": pa.array([None, [1, 2]], pa.list_(pa.int32())),
                      "isr": pa.array([[1, 2], [1]], pa.list_(pa.int32())), "leader": pa.array([None, 1], pa.int32())})
    html = _table(_to_pandas(table))
    assert "None" not in html and "NA>" not in html
    assert "<td>t</td>\n      <td></td>\n      <td>[1 2]</td>\n      <td></td>" in html
