using System.Text;

namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The trace as CSV: a header of <see cref="TraceColumns"/> names (any order; unknown columns are ignored), one row per
/// access. Fields are plain (the trace's values are anonymised hashes, numbers and flags): no quoting.
/// </summary>
public static class CsvTrace
{
    /// <summary>Writes <paramref name="rows"/> to <paramref name="path"/>, streaming.</summary>
    /// <param name="path">The file to create or overwrite.</param>
    /// <param name="rows">The rows.</param>
    /// <param name="cancellationToken">Stops the write.</param>
    /// <returns>The number of rows written.</returns>
    public static async Task<long> WriteAsync(string path, IEnumerable<BlobAccess> rows, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(rows);
        await using var writer = new StreamWriter(path, append: false, new UTF8Encoding(false), bufferSize: 1 << 16);
        await writer.WriteLineAsync(string.Join(',', TraceColumns.All)).ConfigureAwait(false);
        long count = 0;
        var line = new StringBuilder(160);
        foreach (BlobAccess r in rows)
        {
            line.Clear()
                .Append(r.TimestampMs.ToString(CultureInfo.InvariantCulture)).Append(',')
                .Append(r.Region).Append(',').Append(r.UserId).Append(',').Append(r.AppName).Append(',')
                .Append(r.InvocationId).Append(',').Append(r.BlobName).Append(',').Append(r.BlobType).Append(',')
                .Append(r.ETag).Append(',')
                .Append(double.IsNaN(r.BlobBytes) ? "NaN" : r.BlobBytes.ToString("R", CultureInfo.InvariantCulture)).Append(',')
                .Append(r.IsRead ? '1' : '0').Append(',').Append(r.IsWrite ? '1' : '0');
            await writer.WriteLineAsync(line, cancellationToken).ConfigureAwait(false);
            count++;
        }

        return count;
    }

    /// <summary>Reads the rows of <paramref name="path"/>, streaming.</summary>
    /// <param name="path">A CSV trace file.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>The rows in file order.</returns>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="FormatException">The header lacks a required column, or a row does not parse (the message names the line and column).</exception>
    public static async IAsyncEnumerable<BlobAccess> ReadAsync(string path, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"Trace file '{path}' does not exist.", path);
        }

        using var reader = new StreamReader(path, Encoding.UTF8, detectEncodingFromByteOrderMarks: true, bufferSize: 1 << 16);
        string? header = await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false)
            ?? throw new FormatException($"Trace file '{path}' is empty: expected a header with {string.Join(',', TraceColumns.All)}.");
        var index = ColumnIndex(path, header);
        long lineNumber = 1;
        while (await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            lineNumber++;
            if (line.Length == 0)
            {
                continue;
            }

            yield return Parse(path, lineNumber, line.Split(','), index);
        }
    }

    private static int[] ColumnIndex(string path, string header)
    {
        string[] names = header.Split(',');
        int[] index = new int[TraceColumns.All.Count];
        for (int c = 0; c < index.Length; c++)
        {
            index[c] = Array.FindIndex(names, n => string.Equals(n.Trim(), TraceColumns.All[c], StringComparison.OrdinalIgnoreCase));
        }

        string[] required = [TraceColumns.Timestamp, TraceColumns.AppName, TraceColumns.InvocationId, TraceColumns.BlobName, TraceColumns.BlobBytes, TraceColumns.Read, TraceColumns.Write];
        string[] missing = required.Where(r => index[IndexOf(r)] < 0).ToArray();
        if (missing.Length > 0)
        {
            throw new FormatException($"Trace file '{path}' lacks column(s) {string.Join(", ", missing)}; its header is '{header}', expected the trace's columns {string.Join(',', TraceColumns.All)}.");
        }

        return index;
    }

    private static int IndexOf(string column) => TraceColumns.All.ToList().IndexOf(column);

    private static BlobAccess Parse(string path, long lineNumber, string[] f, int[] index)
    {
        string Field(int c) => index[c] >= 0 && index[c] < f.Length ? f[index[c]].Trim() : string.Empty;
        string timestamp = Field(0), bytes = Field(8);
        if (!double.TryParse(timestamp, NumberStyles.Float, CultureInfo.InvariantCulture, out double ms))
        {
            throw new FormatException($"{path}:{lineNumber}: {TraceColumns.Timestamp} '{timestamp}' is not a number of milliseconds.");
        }

        if (!double.TryParse(bytes, NumberStyles.Float, CultureInfo.InvariantCulture, out double size) && bytes.Length > 0)
        {
            throw new FormatException($"{path}:{lineNumber}: {TraceColumns.BlobBytes} '{bytes}' is not a number (NaN is allowed).");
        }

        return new BlobAccess(
            (long)ms,
            Field(1),
            Field(2),
            Field(3),
            Field(4),
            Field(5),
            Field(6),
            Field(7),
            bytes.Length == 0 ? double.NaN : size,
            Flag(path, lineNumber, TraceColumns.Read, Field(9)),
            Flag(path, lineNumber, TraceColumns.Write, Field(10)));
    }

    private static bool Flag(string path, long lineNumber, string column, string value) => value.ToUpperInvariant() switch
    {
        "1" or "TRUE" or "1.0" => true,
        "0" or "FALSE" or "0.0" or "" => false,
        _ => throw new FormatException($"{path}:{lineNumber}: {column} '{value}' is not a flag (allowed: 1, 0, True, False)."),
    };
}
