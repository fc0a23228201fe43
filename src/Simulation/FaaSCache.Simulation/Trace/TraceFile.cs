namespace FaaSCache.Simulation.Trace;

/// <summary>Trace files by extension: <c>.parquet</c> is Parquet, <c>.json</c>/<c>.jsonl</c>/<c>.ndjson</c> Azure Storage's own request logs (<see cref="StorageBlobLogs"/>, read only), anything else CSV.</summary>
public static class TraceFile
{
    /// <summary>Whether <paramref name="path"/> names a Parquet file.</summary>
    /// <param name="path">A file path.</param>
    /// <returns>True for <c>.parquet</c>.</returns>
    public static bool IsParquet(string path) => string.Equals(Path.GetExtension(path), ".parquet", StringComparison.OrdinalIgnoreCase);

    /// <summary>Reads a CSV or Parquet trace, streaming.</summary>
    /// <param name="path">The trace file.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>The rows in file order.</returns>
    public static IAsyncEnumerable<BlobAccess> ReadAsync(string path, CancellationToken cancellationToken = default)
        => IsParquet(path) ? ParquetTrace.ReadAsync(path, cancellationToken)
            : StorageBlobLogs.IsJsonLines(path) ? StorageBlobLogs.ReadAsync(path, cancellationToken)
            : CsvTrace.ReadAsync(path, cancellationToken);

    /// <summary>Writes a CSV or Parquet trace, streaming.</summary>
    /// <param name="path">The file to create.</param>
    /// <param name="rows">The rows.</param>
    /// <param name="cancellationToken">Stops the write.</param>
    /// <returns>The number of rows written.</returns>
    public static Task<long> WriteAsync(string path, IEnumerable<BlobAccess> rows, CancellationToken cancellationToken = default)
        => IsParquet(path) ? ParquetTrace.WriteAsync(path, rows, cancellationToken) : CsvTrace.WriteAsync(path, rows, cancellationToken);
}
