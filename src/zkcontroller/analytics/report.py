"""Report: ``report.html`` (clusters, warnings, rejected lines) and one page per cluster under ``report/``.

Each cluster page has its own time window and reads top-down as an on-call engineer would: the incident
timeline first (tenures to scale, failures, restarts, split-brain windows shaded), then leaderless
partitions and leaders per broker over time, handling times, and the tables behind each figure with
``file:line`` links to the log lines. Plots are inlined PNGs: no scripts, no network.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import os
import re
import warnings
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

MAX_ROWS = 200
STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}"
    "h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}"
    "table.data{border-collapse:collapse;font-size:13px;margin:.5em 0}"
    "table.data td,table.data th{border:1px solid #ccc;padding:3px 8px;text-align:left;white-space:nowrap}"
    ".scroll{overflow-x:auto;max-width:100%}"
    # the file:line column stays in view while a wide table scrolls under it: it is how a row is traced
    "table.linked tr>:last-child{position:sticky;right:0;background:#fff;box-shadow:-3px 0 4px rgba(0,0,0,.12)}"
    "table.linked tr:nth-child(even)>td:last-child{background:#fafafa}table.linked tr>th:last-child{background:#f2f2f2}"
    "table.data th{background:#f2f2f2}table.data tr:nth-child(even){background:#fafafa}"
    ".empty{color:#666;font-style:italic}img{max-width:100%}.warn{background:#fff4e5;border-left:4px solid #f90;"
    "padding:.4em .8em;margin:.3em 0}.note{color:#555;font-size:13px}nav a{margin-right:1em}"
)
INCIDENT_COLORS = {
    "broker_failure": "tab:red", "broker_started": "tab:green", "controlled_shutdown": "tab:blue",
    "unclean_election": "tab:orange",
    "restart": "black", "epoch_reset": "purple", "resigned": "tab:gray",
}


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    with warnings.catch_warnings():  # sub-second windows: matplotlib warns that it falls back to 30 ticks
        warnings.simplefilter("ignore", UserWarning)
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _empty(text: str) -> str:
    return f'<p class="empty">{html.escape(text)}</p>'


def _read(out: Path, name: str) -> pd.DataFrame:
    path = out / name
    if not path.exists():
        return pd.DataFrame()
    df = pd.read_parquet(path, dtype_backend="numpy_nullable")
    if "cluster" in df.columns:
        df["cluster"] = df["cluster"].astype(str)
    return df


_SCALAR = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_string,
           pa.types.is_large_string)


def _arrow_scalar(arrow_type: pa.DataType) -> pd.ArrowDtype | None:
    """Integers, floats, booleans and strings as pandas' Arrow-backed dtype (nullable: no detour through float
    for an integer column with nulls); lists and timestamps as pyarrow converts them by default."""
    return pd.ArrowDtype(arrow_type) if any(test(arrow_type) for test in _SCALAR) else None


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    """``table`` with the dtypes ``_read`` gives (``dtype_backend="numpy_nullable"``): integers stay integers
    (``Int32``, nulls ``<NA>``), timestamps datetime64. Public API only: pandas' own mapping from Arrow types to
    its nullable dtypes is private, so scalars go through ``ArrowDtype`` and ``convert_dtypes`` maps those."""
    return table.to_pandas(types_mapper=_arrow_scalar).convert_dtypes(dtype_backend="numpy_nullable")


def _cluster_rows(out: Path, name: str, cluster: str, columns: list[str] | None = None) -> pa.Table | None:
    """One cluster's rows of a table partitioned by cluster, as Arrow (no cluster column); None if absent."""
    path = out / name
    if not path.exists():
        return None
    rows = ds.dataset(path, format="parquet", partitioning="hive")
    if "cluster" not in rows.schema.names:  # an empty table: Spark wrote no partition (or no file)
        return None
    table = rows.to_table(columns=columns, filter=pc.field("cluster") == cluster)
    return table.drop_columns(["cluster"]) if "cluster" in table.column_names else table


def _head(out: Path, name: str, cluster: str, order: tuple[str, ...], limit: int = MAX_ROWS
          ) -> tuple[pd.DataFrame, int]:
    """The cluster's first ``limit`` rows by ``order`` (a stable sort, nulls last, as ``_of``) and its row
    count. A 10M-line log has millions of anomalies and elections, of which a page shows ``limit``: sorting
    in Arrow and converting only those rows keeps the driver from holding whole tables in pandas."""
    table = _cluster_rows(out, name, cluster)
    if table is None or table.num_rows == 0:
        return pd.DataFrame(), 0
    first = pc.sort_indices(table, sort_keys=[(c, "ascending") for c in order])[:limit]
    return _to_pandas(table.take(first)), table.num_rows


def slug(cluster: str) -> str:
    """A file name for a cluster's page: the name itself when it is a safe one, else its safe characters and a
    hash of the name, so that ``eu/prod`` and ``eu prod`` do not share (and overwrite) one page."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", cluster)
    if safe == cluster and safe not in ("", ".", ".."):
        return safe
    return f"{safe}-{hashlib.sha256(cluster.encode()).hexdigest()[:8]}"


class Links:
    """Turns (source_file, line_number) into a link from a page to the log file, relative to that page."""

    def __init__(self, paths: dict[str, str], page_dir: Path) -> None:
        self.paths, self.page_dir = paths, page_dir

    def cell(self, source: object, line: int | float | None) -> str:
        if source is None or pd.isna(source):
            return ""
        text = f"{source}:{'' if line is None or pd.isna(line) else int(line)}"
        target = self.paths.get(str(source))
        if target is None:
            return html.escape(text)
        href = os.path.relpath(target, self.page_dir)
        return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def _is_null(value: object) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


NULL_CELL = "<td><NA></td>"
"""How ``to_html`` writes a nullable column's null whatever ``na_rep`` says (formatters never see nulls): raw, an
unknown HTML tag. Never a value's cell: values pass through ``html.escape``."""


def _table(df: pd.DataFrame, links: Links | None = None, limit: int = MAX_ROWS, total: int | None = None) -> str:
    """A readable HTML table: timestamps to the millisecond, integers as integers, file:line as a link.

    ``total``: the table's row count when ``df`` holds only its first rows (``_head``)."""
    if df.empty:
        return _empty("none")
    total = len(df) if total is None else total
    shown = df.head(limit).copy()
    if "source_file" in shown.columns and links is not None:
        shown.insert(len(shown.columns), "where", [links.cell(s, n) for s, n in zip(
            shown["source_file"], shown.get("line_number", pd.Series([None] * len(shown))), strict=True)])
        shown = shown.drop(columns=[c for c in ("source_file", "line_number") if c in shown.columns])
    for c in shown.columns:
        if pd.api.types.is_datetime64_any_dtype(shown[c]):
            shown[c] = shown[c].dt.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3]
    for c in shown.columns:  # an object column's null (a list column's: a first ISR's previous_isr) read "None"
        if shown[c].dtype == object and c != "where":
            shown[c] = ["" if _is_null(v) else v for v in shown[c]]
    linked = "where" in shown.columns
    body = shown.to_html(index=False, na_rep="", border=0, classes="data linked" if linked else "data", escape=False,
                         formatters={c: (lambda v: html.escape(str(v))) for c in shown.columns if c != "where"})
    body = body.replace(NULL_CELL, "<td></td>")
    more = f'<p class="note">{total - limit} more row(s) in the Parquet table.</p>' if total > limit else ""
    return f'<div class="scroll">{body}</div>{more}'


def _ms(series: pd.Series) -> list[int]:
    """Epoch milliseconds of timestamps, in one vectorized step (one ``pd.Timestamp`` per row took 0.5 s of the
    report for the 155k incidents of a 1M-line log)."""
    stamps = pd.to_datetime(series, utc=True)
    return ((stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(milliseconds=1)).astype("int64").tolist()


EPISODE_GAP_MS = 60_000
MAX_EPISODES = 4


def episodes(points: list[int], window: tuple[int, int]) -> list[tuple[int, int]]:
    """Time ranges worth drawing: incident instants split where nothing happens for a minute and a tenth of
    the window (a restart hours later would otherwise squeeze every incident into a hair-line). The busiest
    ``MAX_EPISODES`` are kept, in time order; each is drawn to its own scale."""
    lo, hi = window
    if not points:
        return [(lo, max(hi, lo + 1))]
    gap = max(EPISODE_GAP_MS, (hi - lo) // 10)
    points = sorted(points)
    groups: list[list[int]] = [[points[0]]]
    for p in points[1:]:
        if p - groups[-1][-1] > gap:
            groups.append([p])
        else:
            groups[-1].append(p)
    kept = sorted(sorted(groups, key=len, reverse=True)[:MAX_EPISODES], key=lambda g: g[0])
    out = []
    for g in kept:
        pad = max((g[-1] - g[0]) // 20, 50)
        out.append((g[0] - pad, g[-1] + pad))
    return out


def _axes(eps: list[tuple[int, int]], height: float) -> tuple[Any, list[Any]]:
    fig, axes = plt.subplots(1, len(eps), figsize=(11, height), sharey=True, squeeze=False,
                             gridspec_kw={"wspace": 0.04})
    for ax, (lo, hi) in zip(axes[0], eps, strict=True):
        ax.set_xlim(pd.Timestamp(lo, unit="ms"), pd.Timestamp(hi, unit="ms"))
        locator = mdates.AutoDateLocator(maxticks=4 if len(eps) > 1 else 8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.tick_params(axis="x", labelsize=7)
    for ax in axes[0][1:]:
        ax.tick_params(axis="y", left=False)
    return fig, list(axes[0])


def _naive(ts: Any) -> Any:
    return pd.Timestamp(ts).tz_localize(None) if pd.Timestamp(ts).tzinfo else pd.Timestamp(ts)


MAX_LABELLED_MARKERS = 60
"""Above this many markers of one kind in a panel their broker labels would only overlap: markers only."""
MARKER_SLOTS = 4_400
MARKERS = {"unclean_election": "D", "broker_started": "^", "controlled_shutdown": "v", "broker_failure": "x"}
"""Drawn in this order: the often numerous unclean elections first, so broker failures stay visible on top."""


def _draw_incidents(ax: Any, incidents: pd.DataFrame, broker_lane: int) -> None:
    """One artist per incident kind (a log with 10,000s of unclean elections must not cost one each)."""
    if incidents.empty:
        return
    at = mdates.date2num(pd.to_datetime(incidents["at"]).dt.tz_localize(None))
    end_at = pd.to_datetime(incidents["end_at"]).dt.tz_localize(None)
    end = mdates.date2num(end_at.fillna(pd.to_datetime(incidents["at"]).dt.tz_localize(None)))
    kind = incidents["incident"].to_numpy()
    lo, hi = ax.get_xlim()
    for name, colour, alpha in (("split_brain", "red", 0.25), ("election_storm", "orange", 0.2)):
        for start, stop in zip(at[kind == name], end[kind == name], strict=True):
            ax.axvspan(start, stop, color=colour, alpha=alpha)
    for name in ("restart", "epoch_reset"):
        xs = at[kind == name]
        if len(xs):
            ax.vlines(xs, 0, 1, transform=ax.get_xaxis_transform(), colors=INCIDENT_COLORS[name],
                      linestyles="--", linewidth=1)
    broker_ids = incidents["broker_id"]
    for name, marker in MARKERS.items():
        visible = (kind == name) & (at >= lo) & (at <= hi)
        xs = _marker_positions(at[visible], lo, hi)
        if not len(xs):
            continue
        ax.plot(xs, np.full(len(xs), broker_lane), marker=marker, color=INCIDENT_COLORS[name], linestyle="none")
        labelled = visible & broker_ids.notna().to_numpy()
        if labelled.sum() <= MAX_LABELLED_MARKERS:
            for x, label in _combined_labels(ax, at[labelled], [int(b) for b in broker_ids[labelled]]):
                ax.annotate(label, (x, broker_lane + 0.2), fontsize=LABEL_FONT_PT, annotation_clip=True)


def _combined_labels(ax: Any, xs: np.ndarray, brokers: list[int]) -> list[tuple[float, str]]:
    """One label per run of a kind's markers closer than a label's width: two controlled shutdowns 300 ms apart
    drew "b1" and "b0" on top of each other, unreadable; they read "b1,b0" at the first marker."""
    order = np.argsort(xs, kind="stable")
    labels: list[tuple[float, list[int]]] = []
    for i in order:
        x, b = float(xs[i]), brokers[i]
        if labels and x - labels[-1][0] < _label_width(ax, len(",".join(f"b{p}" for p in labels[-1][1]))):
            if b not in labels[-1][1]:
                labels[-1][1].append(b)
            continue
        labels.append((x, [b]))
    return [(x, ",".join(f"b{b}" for b in bs)) for x, bs in labels]


def _marker_positions(xs: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """A panel's markers, at most one per ``MARKER_SLOTS``-th of its width: a 10M-line log puts 1.4M unclean
    elections in one lane, nearly all drawn on top of each other (2.4 s of drawing); a slot is a quarter of a
    pixel of the 11-inch, 100-dpi panel, so the picture is the same."""
    if len(xs) <= MARKER_SLOTS or hi <= lo:
        return xs
    slot = (hi - lo) / MARKER_SLOTS
    return lo + (np.unique(np.floor((xs - lo) / slot)) + 0.5) * slot


LABEL_FONT_PT = 7


def _label_width(ax: Any, chars: int) -> float:
    """The x-axis span of a ``chars``-character label in ``ax`` at ``LABEL_FONT_PT`` (an average glyph is
    about 0.6 em wide), with a glyph of room after it."""
    lo, hi = ax.get_xlim()
    panel_inches = ax.get_position().width * ax.figure.get_figwidth()
    return (chars + 1) * 0.6 * LABEL_FONT_PT / 72 / panel_inches * (hi - lo)


def _spaced(xs: list[float], gap: float) -> list[int]:
    """Indices of the ``xs`` (in time order) to label so that no two labels overlap: each kept one starts at
    least ``gap`` after the previous kept one. A 10M-line log has 800 tenures; labelled all, their epochs were
    one unreadable smear, and drawing the labels was a quarter of the report's time."""
    kept: list[int] = []
    last = None
    for i, x in enumerate(xs):
        if last is None or x - last >= gap:
            kept.append(i)
            last = x
    return kept


def plot_timeline(tenures: pd.DataFrame, incidents: pd.DataFrame, eps: list[tuple[int, int]]) -> str:
    """Tenures to scale (one lane per controller), incident markers, split-brain windows shaded; one panel per
    episode, each to its own scale."""
    if tenures.empty and incidents.empty:
        return _empty("No controller tenure and no incident in this cluster's logs.")
    controllers = sorted(int(c) for c in tenures.controller_id.dropna().unique()) if not tenures.empty else []
    lanes = {c: i for i, c in enumerate(controllers)}
    broker_lane = len(controllers)
    fig, axes = _axes(eps, 0.5 * (len(controllers) + 1) + 1.6)
    colors = plt.get_cmap("tab10")
    # One bar collection and one tick line per lane and panel (not per tenure: 200 tenures drawn in four panels
    # took 1.4 s); each panel labels only the tenures that start inside it, and only as many as fit.
    starts = np.array([mdates.date2num(_naive(x)) for x in tenures.start_at]) if not tenures.empty else np.array([])
    ends = np.array([mdates.date2num(_naive(x)) for x in tenures.end_at]) if not tenures.empty else np.array([])
    tenure_lanes = np.array([lanes[int(c)] for c in tenures.controller_id]) if not tenures.empty else np.array([])
    epochs = [int(e) for e in tenures.controller_epoch] if not tenures.empty else []
    for ax in axes:
        lo, hi = ax.get_xlim()
        for lane in lanes.values():
            mine = np.flatnonzero(tenure_lanes == lane)
            ax.broken_barh([(starts[i], ends[i] - starts[i]) for i in mine], (lane - 0.35, 0.7),
                           color=[colors(epochs[i] % 10) for i in mine])
            ax.plot(starts[mine], np.full(len(mine), lane), marker="|", color="black", markersize=14,
                    linestyle="none")
            inside = [i for i in mine if lo <= starts[i] <= hi]
            widest = max((len(str(epochs[i])) + 1 for i in inside), default=0)
            for k in _spaced([starts[i] for i in inside], _label_width(ax, widest)):
                i = inside[k]
                ax.annotate(f"e{epochs[i]}", (starts[i], lane + 0.38), fontsize=LABEL_FONT_PT, annotation_clip=True)
        _draw_incidents(ax, incidents, broker_lane)
    axes[0].set_yticks(range(broker_lane + 1), [f"controller {c}" for c in controllers] + ["brokers"])
    axes[0].set_ylim(-0.7, broker_lane + 0.8)
    fig.suptitle("bars: controller tenures to scale (colour: epoch) · x broker failure · v controlled shutdown · "
                 "^ broker start · "
                 "D unclean election · dashed: restart / epoch reset · red: split brain", fontsize=8)
    return _png(fig)


SERIES_STYLES = ("-", "--", ":", "-.")


def _series_look(i: int) -> dict[str, Any]:
    """The i-th broker's line: each thinner than the one before and in another dash pattern, so brokers leading
    as many partitions (all of them, in a balanced cluster) stay visible; drawn alike, the last hid the rest."""
    return {"linestyle": SERIES_STYLES[i % len(SERIES_STYLES)], "linewidth": max(0.8, 3.2 - 0.7 * i)}


def _series_steps(rows: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The step line's corners: each slot's peak from its start, then (where the table has it) the level it
    ended with from its end, held until the next slot; a slot's peak alone held over the quiet time after it."""
    if "end_value" not in rows.columns or rows.empty:
        return rows.bucket_ms.astype("int64"), rows.value.astype(float)
    n = len(rows)
    corners = pd.DataFrame({  # slot i's start at 2i, its end at 2i + 1
        "x": pd.concat([rows.bucket_ms, rows.until_ms]).astype("int64").to_numpy(),
        "y": pd.concat([rows.value, rows.end_value]).astype(float).to_numpy(),
        "at": [*range(0, 2 * n, 2), *range(1, 2 * n, 2)]}).sort_values("at", ignore_index=True)
    return corners.x, corners.y


def plot_series(series: pd.DataFrame, ylabel: str, by: str | None, eps: list[tuple[int, int]]) -> str:
    if series.empty:
        return _empty(f"No data for '{ylabel}' in this cluster's logs.")
    fig, axes = _axes(eps, 2.6)
    groups = list(series.groupby(by)) if by else [(None, series)]
    steps = [_series_steps(rows.sort_values("bucket_ms")) for _, rows in groups]
    peak = max((float(np.nanmax(y)) for _, y in steps if len(y) and not np.isnan(y).all()), default=0.0)
    for ax in axes:
        for i, ((key, _), (x, y)) in enumerate(zip(groups, steps, strict=True)):
            ax.step(pd.to_datetime(x, unit="ms"), y, where="post", label=f"broker {key}" if by else None,
                    **(_series_look(i) if by else {}))
        # headroom: a line at its peak sat on the panel's top border (and under the legend), hard to see
        ax.set_ylim(0, max(peak * 1.15, peak + 1))
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    if by:
        axes[-1].legend(fontsize="x-small", loc="upper right", ncol=6)
    axes[0].set_ylabel(ylabel)
    return _png(fig)


def _bars(ax: Any, labels: list[str], widths: pd.Series, **style: Any) -> None:
    ax.barh(range(len(labels)), widths.astype(float), **style)
    ax.set_yticks(range(len(labels)), labels)


def plot_handling(tenures: pd.DataFrame, failures: pd.DataFrame) -> str:
    gaps = tenures.dropna(subset=["failover_gap_ms"]) if not tenures.empty else tenures
    if gaps.empty and failures.empty:
        return _empty("No failover or broker failure to measure.")
    # A side without data is said in words, not drawn as an empty 0-1 axis.
    fig, axes = plt.subplots(1, int(not gaps.empty) + int(not failures.empty), figsize=(11, 3), squeeze=False)
    panels = iter(axes[0])
    # Bars at their own positions, not at their labels: matplotlib's category axis drew two bars of one label
    # (a broker failing twice within a second, an epoch seen again after a reset) at one place, one hidden.
    if not gaps.empty:
        left = next(panels)
        _bars(left, [f"e{e}" for e in gaps.controller_epoch.tail(30)], gaps.failover_gap_ms.tail(30))
        left.set_xlabel("failover: previous tenure's end to readiness (ms)")
    if not failures.empty:
        right = next(panels)
        _bars(right, [f"b{b} {t:%H:%M:%S.%f}"[:-3] for b, t in zip(failures.broker_id.tail(30),
                                                                    failures.detected_at.tail(30), strict=True)],
              failures.duration_ms.tail(30), color="tab:red")
        right.set_xlabel("broker failure handling (ms)")
    for ax in axes[0]:
        ax.tick_params(axis="y", labelsize="x-small")
    return (_png(fig) + ("" if not gaps.empty else _empty("No failover in this log."))
            + ("" if not failures.empty else _empty("No broker failures in this log.")))


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def _of(df: pd.DataFrame, cluster: str, *order: str) -> pd.DataFrame:
    """The cluster's rows (without the cluster column), sorted by ``order``; empty tables stay empty."""
    if df.empty or "cluster" not in df.columns:
        return pd.DataFrame()
    rows = df[df.cluster == cluster].drop(columns=["cluster"])
    return rows.sort_values(list(order), kind="stable") if order and not rows.empty else rows


def _isr_summary(out: Path, cluster: str) -> str:
    """Shrinks and expansions per leader or controller: a cluster that heals shows both, in balance."""
    changes = _cluster_rows(out, "isr_changes", cluster, ["by", "change"])
    if changes is None or changes.num_rows == 0:
        return '<p class="note">No ISR change in these logs.</p>'
    grouped = changes.group_by(["by", "change"]).aggregate([([], "count_all")]).to_pylist()
    counts = {(g["by"], g["change"]): g["count_all"] for g in grouped}
    parts = [f"{n} {change} by the {by}" for (by, change), n in sorted(counts.items())]
    return f'<p class="note">{html.escape(", ".join(parts))}.</p>'


def _head_table(out: Path, name: str, cluster: str, order: tuple[str, ...], links: Links) -> str:
    """``_table`` of a large table, from its first rows (``_head``) and its row count."""
    head, total = _head(out, name, cluster, order)
    return _table(head, links, total=total)


INCIDENT_NAMES = {  # (one, many), in the order a page's summary names them
    "first": ("first election", "first elections"), "failover": ("failover", "failovers"),
    "restart": ("restart", "restarts"), "epoch_reset": ("epoch reset", "epoch resets"),
    "split_brain": ("split-brain window", "split-brain windows"),
    "election_storm": ("election storm", "election storms"),
    "broker_failure": ("broker failure", "broker failures"), "broker_started": ("broker start", "broker starts"),
    "controlled_shutdown": ("controlled shutdown", "controlled shutdowns"),
    "unclean_election": ("unclean election", "unclean elections"), "resigned": ("resignation", "resignations"),
}


def incident_summary(counts: dict[str, int]) -> str:
    """A page's one-line count of its incidents, in words ("1 first election, 2 failovers"): the incident
    kinds as they were ("1 first, 3 resigned") read as a riddle."""
    order = [k for k in INCIDENT_NAMES if counts.get(k)] + sorted(k for k in counts if k not in INCIDENT_NAMES)
    names = {k: INCIDENT_NAMES.get(k, (k.replace("_", " "),) * 2) for k in order}
    return ", ".join(f"{counts[k]} {names[k][counts[k] != 1]}" for k in order) or "no incident"


def cluster_page(out: Path, cluster: str, t: dict[str, pd.DataFrame], links: Links) -> str:
    tenures = _of(t["controller_tenures"], cluster, "start_at", "controller_epoch")
    incidents = _of(t["incidents"], cluster, "at", "incident")
    failures = _of(t["broker_failures"], cluster, "detected_at")
    sources = _of(t["sources"], cluster)
    events_window = t["windows"].get(cluster, (0, 1))
    points = [] if incidents.empty else [*_ms(incidents["at"]), *_ms(incidents["end_at"].dropna())]
    eps = episodes([int(p) for p in points], events_window)
    counts = incidents.incident.value_counts().to_dict() if not incidents.empty else {}
    summary = incident_summary(counts)
    start, end = (pd.Timestamp(x, unit="ms", tz="UTC") for x in events_window)
    fed = ", ".join(f"{r.source_file} ({r.source_format}, {r.events} events)" for r in sources.itertuples())
    sections = [
        f"<nav><a href=\"../report.html\">all clusters</a></nav><h1>Cluster {html.escape(cluster)}</h1>"
        f"<p>{start:%Y-%m-%d %H:%M:%S.%f}"[:-3] + f" to {end:%Y-%m-%d %H:%M:%S.%f}"[:-3]
        + f" UTC · {html.escape(summary)}</p><p class=\"note\">Sources: {html.escape(fed)}</p>",
        "<h2>Incident timeline</h2>" + plot_timeline(tenures, incidents, eps)
        + _table(incidents.drop(columns=["end_at"], errors="ignore"), links),
        "<h2>Controller tenures</h2>" + _table(tenures.drop(columns=[
            "elected_at", "first_seen_at", "last_seen_at", "previous_controller_id", "previous_epoch"],
            errors="ignore"), links),
        "<h2>Split-brain windows</h2>" + _table(_of(t["split_brain_windows"], cluster), links),
        "<h2>Partitions without a leader over time</h2>"
        + plot_series(_of(t["leaderless_partitions_over_time"], cluster), "partitions without leader", None, eps),
        "<h2>Leaders per broker over time</h2>"
        + plot_series(_of(t["leaders_per_broker_over_time"], cluster), "partitions led", "broker_id", eps),
        "<h2>Failover and broker-failure handling times</h2>" + plot_handling(tenures, failures)
        + _table(failures, links),
        "<h2>Anomalies</h2>" + _head_table(out, "anomalies", cluster, ("detected_at", "anomaly"), links),
        "<h2>Leader elections</h2>"
        + _head_table(out, "leader_elections", cluster, ("elected_at", "topic", "partition"), links),
        "<h2>Topic deletions</h2>" + _table(_of(t["topic_deletions"], cluster, "requested_at", "topic"), links),
        "<h2>Partition reassignments</h2>"
        + _table(_of(t["partition_reassignments"], cluster, "started_at", "topic", "partition"), links),
        "<h2>Controlled shutdowns</h2>"
        + _table(_of(t["controlled_shutdowns"], cluster, "requested_at", "broker_id"), links),
        "<h2>ISR changes</h2>" + _isr_summary(out, cluster)
        + _head_table(out, "isr_changes", cluster, ("changed_at", "topic", "partition"), links),
    ]
    return _page(f"{cluster}: Kafka controller analysis", "\n".join(sections))


def write_report(out: Path, rows: dict[str, int], config: Any, warnings: list[str],
                 source_paths: dict[str, str] | None = None, windows: dict[str, tuple[int, int]] | None = None,
                 ) -> Path:
    """Render ``out/report.html`` and ``out/report/<cluster>.html`` from the tables under ``out``;
    ``windows`` is each cluster's (first, last) event time in ms."""
    # Read whole: the tables a page draws from. Anomalies, elections and ISR changes are shown by their first
    # rows only and read per page (``_head``).
    names = ("controller_tenures", "incidents", "broker_failures", "sources", "split_brain_windows",
             "leaderless_partitions_over_time", "leaders_per_broker_over_time",
             "topic_deletions", "partition_reassignments", "controlled_shutdowns")
    t: dict[str, Any] = {name: _read(out, name) for name in names}
    t["windows"] = windows or {}
    pages = out / "report"
    pages.mkdir(exist_ok=True)
    written = {f"{slug(cluster)}.html" for cluster in t["windows"]}
    for stale in pages.glob("*.html"):  # an earlier run's page of a cluster this run does not have
        if stale.name not in written:
            stale.unlink()
    links = Links(source_paths or {}, pages)
    index_rows = []
    for cluster in sorted(t["windows"]):
        (pages / f"{slug(cluster)}.html").write_text(cluster_page(out, cluster, t, links), encoding="utf-8")
        inc = _of(t["incidents"], cluster)
        counts = inc.incident.value_counts() if not inc.empty else pd.Series(dtype=int)
        index_rows.append(
            f'<tr><td><a href="report/{slug(cluster)}.html">{html.escape(cluster)}</a></td>'
            + "".join(f"<td>{int(counts.get(k, 0))}</td>" for k in (
                "failover", "restart", "epoch_reset", "broker_failure", "split_brain", "unclean_election",
                "election_storm")) + "</tr>")
    rejected = _read(out, "rejected_lines")
    reasons = rejected.groupby("reason").size().rename("lines").reset_index() if not rejected.empty else rejected
    files = (rejected.groupby("source_file").size().rename("lines").reset_index()
             .sort_values(["lines", "source_file"], ascending=[False, True]).rename(columns={"source_file": "file"})
             if not rejected.empty else rejected)
    body = (
        "<h1>Kafka controller analysis</h1>"
        + "".join(f'<p class="warn">{html.escape(w)}</p>' for w in warnings)
        + '<table class="data"><tr><th>cluster</th><th>failovers</th><th>restarts</th><th>epoch resets</th>'
        + "<th>broker failures</th><th>split-brain windows</th><th>unclean elections</th><th>election storms</th>"
        + "</tr>" + "".join(index_rows) + "</table>"
        + f"<h2>Tables</h2>{_table(pd.DataFrame({'table': list(rows), 'rows': list(rows.values())}))}"
        + f"<p class=\"note\">Inputs: {html.escape(', '.join(config.inputs))}</p>"
        + f"<h2>Rejected lines</h2><p><b>{rows.get('rejected_lines', 0)}</b> line(s) could not be parsed"
        + (" (see <code>rejected_lines</code>):" + _table(reasons) if not reasons.empty else ".") + "</p>"
        + (f"<p>By file:</p>{_table(files)}" if not files.empty else "")
    )
    path = out / "report.html"
    path.write_text(_page("zkcontroller analysis", body), encoding="utf-8")
    return path
