using Parquet;
using Parquet.Schema;

namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The trace as Parquet (Parquet.Net): the <see cref="TraceColumns"/> as columns (Timestamp int64, BlobBytes double,
/// Read and Write booleans, the rest strings), written and read one row group at a time so memory stays bounded.
/// </summary>
public static class ParquetTrace
{
    /// <summary>Rows per row group.</summary>
    public const int RowGroupRows = 250_000;

    private static readonly DataField<long> Timestamp = new(TraceColumns.Timestamp, false);
    private static readonly DataField<double> Bytes = new(TraceColumns.BlobBytes, false);
    private static readonly DataField<bool> Read = new(TraceColumns.Read, false);
    private static readonly DataField<bool> Write = new(TraceColumns.Write, false);
    private static readonly string[] StringColumns =
        [TraceColumns.Region, TraceColumns.UserId, TraceColumns.AppName, TraceColumns.InvocationId, TraceColumns.BlobName, TraceColumns.BlobType, TraceColumns.ETag];

    private static readonly DataField<string>[] Strings = StringColumns.Select(c => new DataField<string>(c, false)).ToArray();

    private static readonly ParquetSchema Schema = new(
        Timestamp, Strings[0], Strings[1], Strings[2], Strings[3], Strings[4], Strings[5], Strings[6], Bytes, Read, Write);

    /// <summary>Writes <paramref name="rows"/> to <paramref name="path"/> in row groups of <see cref="RowGroupRows"/>.</summary>
    /// <param name="path">The file to create or overwrite.</param>
    /// <param name="rows">The rows.</param>
    /// <param name="cancellationToken">Stops the write.</param>
    /// <returns>The number of rows written.</returns>
    public static async Task<long> WriteAsync(string path, IEnumerable<BlobAccess> rows, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(rows);
        await using FileStream file = File.Create(path);
        await using ParquetWriter writer = await ParquetWriter.CreateAsync(Schema, file, cancellationToken: cancellationToken).ConfigureAwait(false);
        var chunk = new List<BlobAccess>(RowGroupRows);
        long count = 0;
        foreach (BlobAccess row in rows)
        {
            chunk.Add(row);
            if (chunk.Count == RowGroupRows)
            {
                await WriteGroupAsync(writer, chunk, cancellationToken).ConfigureAwait(false);
                count += chunk.Count;
                chunk.Clear();
            }
        }

        if (chunk.Count > 0 || count == 0)
        {
            await WriteGroupAsync(writer, chunk, cancellationToken).ConfigureAwait(false);
            count += chunk.Count;
        }

        return count;
    }

    /// <summary>Reads the rows of <paramref name="path"/>, one row group at a time.</summary>
    /// <param name="path">A Parquet trace file with the <see cref="TraceColumns"/>.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>The rows in file order.</returns>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="FormatException">A required column is missing (the message names it).</exception>
    public static async IAsyncEnumerable<BlobAccess> ReadAsync(string path, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"Trace file '{path}' does not exist.", path);
        }

        await using ParquetReader reader = await ParquetReader.CreateAsync(path, cancellationToken: cancellationToken).ConfigureAwait(false);
        string[] present = reader.Schema.GetDataFields().Select(f => f.Name).ToArray();
        string[] missing = TraceColumns.All.Where(c => !present.Contains(c, StringComparer.Ordinal)).ToArray();
        if (missing.Length > 0)
        {
            throw new FormatException($"Parquet trace '{path}' lacks column(s) {string.Join(", ", missing)}; expected {string.Join(',', TraceColumns.All)}.");
        }

        for (int g = 0; g < reader.RowGroupCount; g++)
        {
            using ParquetRowGroupReader group = reader.OpenRowGroupReader(g);
            int n = checked((int)group.RowCount);
            long[] timestamps = new long[n];
            double[] bytes = new double[n];
            bool[] reads = new bool[n], writes = new bool[n];
            string?[][] strings = Strings.Select(_ => new string?[n]).ToArray();
            await group.ReadAsync(Timestamp, timestamps.AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
            await group.ReadAsync(Bytes, bytes.AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
            await group.ReadAsync(Read, reads.AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
            await group.ReadAsync(Write, writes.AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
            for (int s = 0; s < Strings.Length; s++)
            {
                await group.ReadAsync(Strings[s], strings[s].AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
            }

            for (int i = 0; i < n; i++)
            {
                yield return new BlobAccess(
                    timestamps[i], strings[0][i] ?? string.Empty, strings[1][i] ?? string.Empty, strings[2][i] ?? string.Empty, strings[3][i] ?? string.Empty,
                    strings[4][i] ?? string.Empty, strings[5][i] ?? string.Empty, strings[6][i] ?? string.Empty,
                    bytes[i], reads[i], writes[i]);
            }
        }
    }

    private static async Task WriteGroupAsync(ParquetWriter writer, List<BlobAccess> rows, CancellationToken cancellationToken)
    {
        using ParquetRowGroupWriter group = writer.CreateRowGroup();
        await group.WriteAsync<long>(Timestamp, rows.Select(r => r.TimestampMs).ToArray().AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
        Func<BlobAccess, string>[] pick = [r => r.Region, r => r.UserId, r => r.AppName, r => r.InvocationId, r => r.BlobName, r => r.BlobType, r => r.ETag];
        for (int s = 0; s < Strings.Length; s++)
        {
            await group.WriteAsync(Strings[s], rows.Select(pick[s]).ToArray()).ConfigureAwait(false);
        }

        await group.WriteAsync<double>(Bytes, rows.Select(r => r.BlobBytes).ToArray().AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
        await group.WriteAsync<bool>(Read, rows.Select(r => r.IsRead).ToArray().AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
        await group.WriteAsync<bool>(Write, rows.Select(r => r.IsWrite).ToArray().AsMemory(), cancellationToken: cancellationToken).ConfigureAwait(false);
        group.CompleteValidate();
    }
}
