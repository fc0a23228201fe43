#!/usr/bin/python3
"""The Azure Functions blob trace 2020's own analysis, ported, run on any trace in its columns.

A port of AzurePublicDataset's analysis/AzureFunctionsBlobDataset2020-Trace_Analysis.ipynb (its cells 6-11: blob
sizes, invocations per blob per app, inter-arrival times per blob) plus the paper's other app-level statistics
(Faa$T, SoCC'21, §2.1 and §6.3). It reads a trace CSV in the dataset's columns (Timestamp, AnonAppName,
AnonFunctionInvocationId, AnonBlobETag, BlobBytes, Read, Write; others are ignored; Read/Write may be True/False or
1/0), so it runs unchanged on the real azurefunctions-accesses-2020.csv(.bz2) and on `faascache trace generate`'s
output, prints every statistic with the published value beside it, and writes them to a CSV
(statistic,published,generated,source).

As in the notebook a blob is a blob version (AnonBlobETag), and a share "at or below x" is the notebook's
y[x <= v][-1] = 100 * (count - 1) / apps (its CDF starts at 0). Values "read off" a figure were digitised from the
notebook's stored PNGs (one pixel is ~6% in x on the log axes, ~0.4 points in y).

Usage: /usr/bin/python3 benchmarks/tools/trace_analysis.py TRACE.csv [--out benchmarks/results/trace-statistics.csv]
Needs Debian's python3-pandas (scripts/setup.sh installs it); no PyPI.
"""
import argparse
import sys
import time

import numpy as np
import pandas as pd

NB = "notebook cell"
COLUMNS = ["Timestamp", "AnonAppName", "AnonFunctionInvocationId", "AnonBlobETag", "BlobBytes", "Read", "Write"]


def flag(column):
    """Read/Write as booleans whether the file has True/False or 1/0 (the notebook compares with == True)."""
    if column.dtype == bool:
        return column.to_numpy()
    if np.issubdtype(column.dtype, np.number):
        return column.to_numpy() != 0
    return column.astype(str).str.strip().str.lower().isin(["true", "1", "1.0"]).to_numpy()


def load(path):
    """The columns the analysis needs, ids hashed to 64-bit integers so 44 M rows fit in ~2 GB."""
    parts = []
    for chunk in pd.read_csv(path, usecols=COLUMNS, chunksize=4_000_000,
                             dtype={"AnonAppName": str, "AnonFunctionInvocationId": str, "AnonBlobETag": str}):
        app = pd.util.hash_array(chunk["AnonAppName"].to_numpy(dtype=object))
        parts.append(pd.DataFrame({
            "Timestamp": chunk["Timestamp"].to_numpy(dtype=np.int64),
            "App": app,
            # Invocation ids are counted per app, as the notebook's groupby("AnonAppName") does.
            "Inv": pd.util.hash_array(chunk["AnonFunctionInvocationId"].to_numpy(dtype=object)) ^ (app * np.uint64(31)),
            "ETag": pd.util.hash_array(chunk["AnonBlobETag"].fillna("").to_numpy(dtype=object)),
            "BlobBytes": pd.to_numeric(chunk["BlobBytes"], errors="coerce").to_numpy(dtype=np.float64),
            "Read": flag(chunk["Read"]),
            "Write": flag(chunk["Write"]),
        }))
    return pd.concat(parts, ignore_index=True)


def share_at_most(values, bound, strict=False):
    """The notebook's y[x <= bound][-1] (or x < bound) with y = 100 * arange(n) / n over the sorted values."""
    x = np.sort(values)
    count = np.searchsorted(x, bound, side="left" if strict else "right")
    return 100.0 * (count - 1) / len(x) if count > 0 else 0.0


def percentile_of(x_sorted, p):
    """Cell 6's printed percentiles: x_all[y_all >= p][0] with y_all = 100 * arange(n) / n."""
    if p <= 0:
        return x_sorted[0]
    if p >= 100:
        return x_sorted[-1]
    y = 100.0 * np.arange(len(x_sorted)) / len(x_sorted)
    return x_sorted[y >= p][0]


def analyse(df):
    rows = []

    def add(name, published, generated, source, kind="value"):
        rows.append((name, published, float(generated), source, kind))

    # Totals (§2.1).
    add("apps", 855, df["App"].nunique(), "§2.1")
    add("invocations", 33.1e6, df.groupby("App")["Inv"].nunique().sum(), "§2.1")
    add("accesses", 44_282_912, len(df), "§2.1; dataset rows")
    per_app_etags = df.groupby("App")["ETag"].nunique()
    add("distinct blobs (ETags, per app)", 20.3e6, per_app_etags.sum(), "§2.1 (first accesses)")
    add("read share %", 77.3, 100.0 * df["Read"].mean(), "§2.1")

    # Cell 6 (plt_blob_sizes): sizes per blob, the largest size an ETag was seen with.
    sizes = np.sort(df.groupby("ETag")["BlobBytes"].max().dropna().to_numpy())
    for p, v in [(10, 46), (25, 542), (50, 5302), (75, 9240), (80, 12367), (90, 26764), (95, 110611), (99, 1589532),
                 (100, 1910124864)]:
        add(f"blob size p{p} bytes", v, percentile_of(sizes, p), f"{NB} 9 (printed)")
    per_blob = df.groupby(["ETag", "BlobBytes", "Read", "Write"]).size().reset_index()
    read_sizes = np.sort(per_blob[per_blob["Read"]]["BlobBytes"].dropna().to_numpy())
    write_sizes = np.sort(per_blob[per_blob["Write"]]["BlobBytes"].dropna().to_numpy())
    add("blob size p50 bytes, blobs read", 5600, percentile_of(read_sizes, 50) if len(read_sizes) else np.nan,
        f"{NB} 9 figure 2 (read off)")
    add("blob size p50 bytes, blobs written", 980, percentile_of(write_sizes, 50) if len(write_sizes) else np.nan,
        f"{NB} 9 figure 2 (read off)")
    add("blob size p90 bytes, blobs read", 70100, percentile_of(read_sizes, 90) if len(read_sizes) else np.nan,
        f"{NB} 9 figure 2 (read off)")
    add("blob size p90 bytes, blobs written", 18660, percentile_of(write_sizes, 90) if len(write_sizes) else np.nan,
        f"{NB} 9 figure 2 (read off)")

    # Cell 7 (plt_avg_invoc_per_blob_per_app), printed in cell 10, and Fig. 2's curves read off its figure.
    apps = df.groupby("App").agg(blobs=("ETag", "nunique"), invocations=("Inv", "nunique"))
    ratio = (apps["invocations"] / apps["blobs"]).to_numpy()
    src = f"{NB} 10 (printed); Fig. 2"
    add("apps with < 1 invocation per blob %", 10.98, share_at_most(ratio, 1, strict=True), src)
    add("apps with <= 1 invocation per blob %", 50.12, share_at_most(ratio, 1), src)
    add("apps with <= 1.1 invocations per blob %", 68.11, share_at_most(ratio, 1.1), src)
    add("apps with <= 100 invocations per blob %", 92.29, share_at_most(ratio, 100), src)
    blobs = apps["blobs"].to_numpy()
    add("apps touching a single blob %", 11.80, share_at_most(blobs, 1), f"{NB} 10 (printed); §2.1")
    add("apps with <= 100 blobs %", 66.12, share_at_most(blobs, 100), f"{NB} 10 (printed); §2.1")
    add("apps with <= 10K blobs %", 92.99, share_at_most(blobs, 10_000), f"{NB} 10 (printed); §2.1")
    add("most blobs in one app", 8_137_406, blobs.max(), f"{NB} 10 (printed)")
    read_off = f"{NB} 10 figure, Fig. 2 (read off)"
    for x, v in [(0.5, 5.3), (2, 78.2), (5, 84.1), (10, 87.2), (1000, 93.5), (10_000, 96.1)]:
        add(f"Fig. 2: apps with <= {x:g} invocations per blob %", v, share_at_most(ratio, x), read_off)
    invocations = apps["invocations"].to_numpy()
    for x, v in [(1, 5.1), (10, 26.0), (100, 58.4), (1000, 74.6), (10_000, 88.2), (100_000, 95.9)]:
        add(f"Fig. 2: apps with <= {x:g} invocations %", v, share_at_most(invocations, x), read_off)
    for x, v in [(10, 39.2), (1000, 82.5), (100_000, 97.9)]:
        add(f"Fig. 2: apps with <= {x:g} blobs %", v, share_at_most(blobs, x), read_off)

    # §2.1: "less than 15% of applications account for 99% of the invocations".
    busiest = np.sort(invocations)[::-1]
    carried = np.cumsum(busiest) / busiest.sum()
    add("share of apps carrying 99% of invocations %", 15.0,
        100.0 * (np.searchsorted(carried, 0.99) + 1) / len(busiest), "§2.1 (an upper bound)", "at most")

    # §6.3 and §2.1: the apps' mean time between invocations (from each invocation's first row).
    starts = df.groupby(["App", "Inv"])["Timestamp"].min().reset_index().sort_values(["App", "Timestamp"])
    starts["Gap"] = starts.groupby("App")["Timestamp"].diff()
    mean_iat = starts.groupby("App")["Gap"].mean()
    add("median app's mean time between invocations min", 20.0, mean_iat.dropna().median() / 60_000, "§6.3")
    # Apps invoked once count as rarer than once a minute; §2.1 says 80% of *functions* (the trace has no function
    # column).
    add("apps invoked less than once a minute on average %", 80.0,
        100.0 * (mean_iat.fillna(np.inf) > 60_000).mean(), "§2.1 (said of functions)")
    add("apps with mean time between invocations >= 10 ms %", 99.88,
        100.0 * (mean_iat.fillna(np.inf) >= 10).mean(), "§6.3")
    gap_cov = starts.groupby("App")["Gap"].agg(["mean", "std", "count"])
    gap_cov = gap_cov[gap_cov["count"] >= 10]
    add("apps (10+ invocations) with bursty arrivals, CoV of gaps > 1 %", np.nan,
        100.0 * (gap_cov["std"] / gap_cov["mean"] > 1).mean(), "ours (Fig. 3 says bursty; no app-level figure)")

    # §2.1: reuse and what caching already-accessed data saves (first access of each of an app's blobs).
    first = ~df.duplicated(["App", "ETag"])
    add("first accesses %", 100.0 * 20.3 / 44.3, 100.0 * first.mean(), "§2.1")
    add("accesses saved caching what was accessed %", 54.3, 100.0 * (1 - first.mean()), "§2.1")
    total_bytes = df["BlobBytes"].sum()
    unique_bytes = df.loc[first, "BlobBytes"].sum()
    add("traffic saved caching what was accessed %", 27.0, 100.0 * (1 - unique_bytes / total_bytes), "§2.1")
    add("bytes accessed TB", 2.6, total_bytes / 1e12, "§2.1")
    add("unique bytes TB", 1.9, unique_bytes / 1e12, "§2.1")
    # Cell 10's 50.12% is (430 - 1) / 856 apps at or below one invocation per blob: the other 426 apps (49.77%) have
    # more invocations than blobs, so some blob version is in two of their invocations (a lower bound on reuse).
    add("apps with more invocations than blobs (so reusing one) %", 49.77, 100.0 * (ratio > 1).mean(),
        f"{NB} 10: 426 of 856 apps above 1 (a lower bound on reuse; §2.1 says > 32%)", "at least")
    writes = df.groupby("App")["Write"].sum()
    add("read-only apps %", np.nan, 100.0 * (writes == 0).mean(), "ours (not published)")

    # Cell 8 (plt_iat_per_blob): IaT CoV per blob with 3+ accesses; Fig. 3 (read off cell 11's CDF at CoV = 1).
    aux = df[["ETag", "Timestamp"]].sort_values(["ETag", "Timestamp"])
    same = aux["ETag"].to_numpy()[1:] == aux["ETag"].to_numpy()[:-1]
    iat = pd.DataFrame({"ETag": aux["ETag"].to_numpy()[:-1][same],
                        "IaT": np.diff(aux["Timestamp"].to_numpy())[same].astype(np.float64)})
    g = iat.groupby("ETag")["IaT"].agg(["mean", "std", "count"])
    g = g[g["count"] > 1]
    cov = (g["std"] / g["mean"]).to_numpy()
    add("blobs (3+ accesses) with IaT CoV > 1 %", 36.0, 100.0 * np.mean(cov > 1) if len(cov) else np.nan,
        f"{NB} 11 figure 1, Fig. 3 (read off)")
    return rows


def verdict(published, generated, kind):
    if np.isnan(published) or np.isnan(generated):
        return ""
    if kind == "at most":
        return "ok (bound)" if generated <= published else "OVER the bound"
    if kind == "at least":
        return "ok (bound)" if generated >= published else "UNDER the bound"
    return "within 10%" if abs(generated - published) <= 0.10 * abs(published) else "NOT within 10%"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace", help="trace CSV (or .csv.bz2) in the dataset's columns")
    parser.add_argument("--out", default="benchmarks/results/trace-statistics.csv")
    args = parser.parse_args()
    started = time.time()
    df = load(args.trace)
    rows = analyse(df)
    print(f"{'statistic':<66} {'published':>14} {'generated':>14}  verdict")
    for name, published, generated, source, kind in rows:
        print(f"{name:<66} {published:>14.6g} {generated:>14.6g}  {verdict(published, generated, kind):<16} [{source}]")
    out = pd.DataFrame([(n, p, g, s) for n, p, g, s, _ in rows],
                       columns=["statistic", "published", "generated", "source"])
    out.to_csv(args.out, index=False, float_format="%.6g")
    missed = [n for n, p, g, s, k in rows if verdict(p, g, k).startswith(("NOT", "OVER", "UNDER"))]
    print(f"{len(df):,} rows in {time.time() - started:.0f} s; wrote {args.out}; "
          f"{len(missed)} of {sum(1 for r in rows if verdict(r[1], r[2], r[4]))} checked statistics missed: "
          f"{', '.join(missed) or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
