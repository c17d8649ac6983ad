"""Report: one self-contained HTML file (plots inlined as base64 PNG, no scripts, no network).

Reads the small Parquet tables with pandas; the two time series that need the large ``events`` table
arrive already bucketed by Spark (see ``incidents.*_over_time``).
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pandas as pd

MAX_CLUSTERS = 8
MAX_ANOMALY_ROWS = 500


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _empty(text: str) -> str:
    return f'<p class="empty">{html.escape(text)}</p>'


def _times(ms: pd.Series) -> pd.Series:
    return pd.to_datetime(ms, unit="ms", utc=True)


def _busiest(df: pd.DataFrame, column: str = "cluster") -> list[str]:
    return list(df[column].value_counts().index[:MAX_CLUSTERS])


def plot_offline(series: pd.DataFrame) -> str:
    if series.empty:
        return _empty("No partition went OfflinePartition in the observed window.")
    fig, ax = plt.subplots(figsize=(10, 3.5))
    for cluster in _busiest(series):
        part = series[series.cluster == cluster].sort_values("bucket_ms")
        ax.step(_times(part.bucket_ms), part.value, where="post", label=cluster)
    ax.set_ylabel("offline partitions")
    ax.legend(fontsize="small", loc="upper right")
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M"))
    return _png(fig)


def plot_leaders(series: pd.DataFrame) -> str:
    if series.empty:
        return _empty("No partition leadership was recorded.")
    clusters = _busiest(series)
    fig, axes = plt.subplots(len(clusters), 1, figsize=(10, 2.6 * len(clusters)), squeeze=False)
    for ax, cluster in zip(axes[:, 0], clusters, strict=True):
        part = series[series.cluster == cluster]
        for broker, rows in part.groupby("broker_id"):
            rows = rows.sort_values("bucket_ms")
            ax.step(_times(rows.bucket_ms), rows.value, where="post", label=f"broker {broker}")
        ax.set_title(cluster, fontsize="small")
        ax.set_ylabel("partitions led")
        ax.legend(fontsize="x-small", loc="upper right", ncol=4)
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M"))
    return _png(fig)


def plot_tenures(tenures: pd.DataFrame) -> str:
    if tenures.empty:
        return _empty("No controller election or controller activity found.")
    t = tenures.copy()
    t["start"] = t[["elected_at", "ready_at", "first_seen_at"]].bfill(axis=1).iloc[:, 0]
    t["end"] = t[["resigned_at", "replaced_at", "last_seen_at"]].bfill(axis=1).iloc[:, 0].fillna(t["start"])
    t = t.dropna(subset=["start"])
    clusters = _busiest(t)
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(clusters) + 1.5))
    colors = plt.get_cmap("tab10")
    for row, cluster in enumerate(clusters):
        for _, r in t[t.cluster == cluster].iterrows():
            start, end = mdates.date2num(r.start), mdates.date2num(r.end)
            ax.broken_barh([(start, max(end - start, 1e-5))], (row - 0.4, 0.8),
                           color=colors(int(r.controller_id) % 10))
            ax.text(start, row, f" c{r.controller_id}/e{r.controller_epoch}", va="center", fontsize="x-small")
    ax.set_yticks(range(len(clusters)), clusters, fontsize="small")
    ax.xaxis_date()
    ax.set_xlabel("controller tenures (colour = controller id, label = c<id>/e<epoch>)")
    return _png(fig)


def plot_durations(tenures: pd.DataFrame, failures: pd.DataFrame) -> str:
    gaps = tenures.dropna(subset=["failover_gap_ms"])
    if gaps.empty and failures.empty:
        return _empty("No failover or broker failure to measure.")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5))
    if not gaps.empty:
        labels = [f"{c} e{e}" for c, e in zip(gaps.cluster, gaps.controller_epoch, strict=True)]
        left.barh(labels[-30:], gaps.failover_gap_ms.tail(30) / 1000.0)
    left.set_xlabel("failover gap (s): previous controller's end to readiness")
    left.tick_params(axis="y", labelsize="x-small")
    if not failures.empty:
        labels = [f"{c} b{b}" for c, b in zip(failures.cluster, failures.broker_id, strict=True)]
        right.barh(labels[-30:], failures.duration_ms.tail(30) / 1000.0, color="tab:red")
    right.set_xlabel("broker failure handling (s)")
    right.tick_params(axis="y", labelsize="x-small")
    return _png(fig)


def plot_latency(latency: pd.DataFrame) -> str:
    if latency.empty:
        return _empty("No controller_event records (queue latency comes from the JSONL event log only).")
    top = latency.sort_values("count", ascending=False).head(15)
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.35 * len(top) + 1.5), sharey=True)
    for ax, kind in zip(axes, ("queue", "processing"), strict=True):
        for offset, p in enumerate((50, 95, 99)):
            ax.barh([y + offset * 0.27 for y in range(len(top))], top[f"{kind}_p{p}_ms"], height=0.27,
                    label=f"p{p}")
        ax.set_xscale("symlog")
        ax.set_xlabel(f"{kind} time (ms)")
        ax.legend(fontsize="x-small")
    axes[0].set_yticks([y + 0.27 for y in range(len(top))], [f"{c}: {e}" for c, e in zip(
        top.cluster, top.event_name, strict=True)], fontsize="x-small")
    return _png(fig)


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, na_rep="", border=0, classes="data", escape=True)


def write_report(out: Path, rows: dict[str, int], series: dict[str, pd.DataFrame], config: Any) -> Path:
    """Render ``out/report.html`` from the tables under ``out`` and the pre-bucketed series."""
    def table(name: str) -> pd.DataFrame:
        return pd.read_parquet(out / name)

    tenures, failures = table("controller_tenures"), table("broker_failures")
    anomalies, latency = table("anomalies"), table("event_queue_latency")
    by_type = anomalies.groupby("anomaly").size().rename("count").reset_index() if not anomalies.empty else anomalies
    rejected = series["rejected_reasons"]
    sections = [
        ("Summary", _table(pd.DataFrame({"table": list(rows), "rows": list(rows.values())}))
         + f"<p>Inputs: {html.escape(', '.join(config.inputs))}</p>"
         + f"<p><b>{rows.get('rejected_lines', 0)}</b> line(s) could not be parsed"
         + (" (see <code>rejected_lines</code>):" + _table(rejected) if not rejected.empty else ".") + "</p>"),
        ("Offline partitions over time", plot_offline(series["offline"])),
        ("Leader count per broker over time", plot_leaders(series["leaders"])),
        ("Controller tenures", plot_tenures(tenures)),
        ("Failover and broker-failure durations", plot_durations(tenures, failures)),
        ("Controller event queue latency", plot_latency(latency)),
        ("Anomalies", (_table(by_type) + _table(anomalies.head(MAX_ANOMALY_ROWS))) if not anomalies.empty
         else _empty("No anomaly found.")),
    ]
    body = "\n".join(f"<h2>{html.escape(title)}</h2>\n{content}" for title, content in sections)
    page = (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>zkcontroller analysis</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:1100px}table.data{border-collapse:collapse;"
        "font-size:12px}table.data td,table.data th{border:1px solid #ccc;padding:2px 6px}"
        ".empty{color:#666;font-style:italic}img{max-width:100%}</style></head><body>"
        f"<h1>Kafka controller analysis</h1>\n{body}\n</body></html>\n"
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
