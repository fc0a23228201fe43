namespace FaaSCache.Benchmarks;

/// <summary>
/// A results CSV whose first column is <c>storage_latency_ms</c>: a run replaces only its own distance's rows and keeps
/// the others (so the loopback rows and the rows with storage 10 ms away sit side by side). Rows of an older file
/// without the column are loopback rows (0).
/// </summary>
internal static class DistanceCsv
{
    public const string Column = "storage_latency_ms";

    /// <summary>Writes <paramref name="rows"/> (without the distance) for <paramref name="latencyMs"/> into <paramref name="path"/>; returns the path.</summary>
    public static string Write(string path, string header, double latencyMs, IEnumerable<string> rows)
    {
        string distance = latencyMs.ToString("0.##", CultureInfo.InvariantCulture);
        var kept = new List<string>();
        if (File.Exists(path))
        {
            string[] lines = File.ReadAllLines(path);
            bool hasColumn = lines.Length > 0 && lines[0].StartsWith(Column + ",", StringComparison.Ordinal);
            foreach (string line in lines.Skip(1).Where(l => l.Length > 0))
            {
                string row = hasColumn ? line : "0," + line;
                if (row[..row.IndexOf(',', StringComparison.Ordinal)] != distance)
                {
                    kept.Add(row);
                }
            }
        }

        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        IEnumerable<string> all = kept.Concat(rows.Select(r => $"{distance},{r}"))
            .OrderBy(r => double.Parse(r[..r.IndexOf(',', StringComparison.Ordinal)], CultureInfo.InvariantCulture));
        File.WriteAllLines(path, [$"{Column},{header}", .. all]);
        return path;
    }
}
