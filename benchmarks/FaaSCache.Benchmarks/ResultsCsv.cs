namespace FaaSCache.Benchmarks;

/// <summary>A benchmark's results CSV: the header, then one line per row (the rows come formatted, in the invariant culture).</summary>
internal static class ResultsCsv
{
    /// <summary>Writes <paramref name="header"/> and <paramref name="rows"/> as <paramref name="fileName"/> in <paramref name="directory"/> (created if missing); returns the file's path.</summary>
    public static string Write(string directory, string fileName, string header, IEnumerable<string> rows)
    {
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, fileName);
        File.WriteAllText(path, string.Concat(rows.Prepend(header).Select(row => row + "\n")));
        return path;
    }
}
