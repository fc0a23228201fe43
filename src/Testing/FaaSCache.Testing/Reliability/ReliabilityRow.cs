namespace FaaSCache.Testing;

/// <summary>
/// What one scenario (a fault or a preset's history) counted, summed over its runs; one row of
/// <c>benchmarks/results/reliability.csv</c>. <see cref="Note"/> is printed, not written to the CSV.
/// </summary>
public sealed class ReliabilityRow(string scenario)
{
    /// <summary>The CSV columns (lost writes, stale and partial reads, leaks per scenario and preset).</summary>
    public const string CsvHeader = "scenario,runs,ops,writes_acked,writes_lost,stale_reads,partial_reads,leaked_maps,leaked_processes,errors";

    private readonly Lock _lock = new();
    private readonly List<string> _notes = [];

    public string Scenario { get; } = scenario;

    public int Runs { get; set; } = 1;

    public long Ops { get; set; }

    public long WritesAcked { get; set; }

    public long WritesLost { get; set; }

    public long StaleReads { get; set; }

    public long PartialReads { get; set; }

    public long LeakedMaps { get; set; }

    public long LeakedProcesses { get; set; }

    /// <summary>Gets or sets the operations that failed (HTTP error or no answer), expected during a fault or not.</summary>
    public long Errors { get; set; }

    /// <summary>Gets the notes: what happened, what could not be done and why.</summary>
    public IReadOnlyList<string> Notes
    {
        get
        {
            lock (_lock)
            {
                return [.. _notes];
            }
        }
    }

    /// <summary>Adds a note (thread-safe).</summary>
    public void Note(string note)
    {
        lock (_lock)
        {
            _notes.Add(note);
        }
    }

    /// <summary>Counts one client operation (thread-safe).</summary>
    public void Count(RegisterOp op, bool partial)
    {
        lock (_lock)
        {
            Ops++;
            if (op.IsWrite && op.Completed)
            {
                WritesAcked++;
            }

            if (!op.Completed)
            {
                Errors++;
            }

            if (partial)
            {
                PartialReads++;
            }
        }
    }

    /// <summary>The CSV line; a scenario with a comma or a quote is quoted (RFC 4180), so every line has ten fields.</summary>
    public string ToCsv() => string.Create(
        CultureInfo.InvariantCulture,
        $"{QuoteCsv(Scenario)},{Runs},{Ops},{WritesAcked},{WritesLost},{StaleReads},{PartialReads},{LeakedMaps},{LeakedProcesses},{Errors}");

    private static string QuoteCsv(string field) =>
        field.AsSpan().IndexOfAny(",\"\n") < 0 ? field : $"\"{field.Replace("\"", "\"\"", StringComparison.Ordinal)}\"";

    /// <summary>Writes <paramref name="rows"/> as <c>reliability.csv</c> under <paramref name="directory"/>; returns the path.</summary>
    public static string WriteCsv(string directory, IEnumerable<ReliabilityRow> rows)
    {
        Directory.CreateDirectory(directory);
        var csv = new StringBuilder().Append(CsvHeader).Append('\n');
        foreach (ReliabilityRow row in rows)
        {
            csv.Append(row.ToCsv()).Append('\n');
        }

        string path = Path.Combine(directory, "reliability.csv");
        File.WriteAllText(path, csv.ToString());
        return path;
    }

    /// <summary>Prints <paramref name="rows"/> as a Markdown table, then each row's notes.</summary>
    public static void Print(TextWriter output, IReadOnlyList<ReliabilityRow> rows)
    {
        output.WriteLine("| scenario | runs | ops | writes acked | writes lost | stale reads | partial reads | leaked maps | leaked processes | errors |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (ReliabilityRow r in rows)
        {
            output.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"| {r.Scenario} | {r.Runs} | {r.Ops} | {r.WritesAcked} | {r.WritesLost} | {r.StaleReads} | {r.PartialReads} | {r.LeakedMaps} | {r.LeakedProcesses} | {r.Errors} |"));
        }

        output.WriteLine();
        foreach (ReliabilityRow r in rows)
        {
            foreach (string note in r.Notes)
            {
                output.WriteLine($"{r.Scenario}: {note}");
            }
        }
    }
}
