namespace FaaSCache.Simulation.Engine;

/// <summary>
/// T_Load, the time a new instance takes to join, as this repository measured it: <c>compute-scaling.csv</c> (the
/// compute-scaling benchmark) ramps load on an app at zero instances, so the first request is held through a cold start.
/// The first second with an instance answers it: that second's <c>p99_ms</c> (the longest-held request) minus the median
/// <c>p50_ms</c> of the run (what a request costs once an instance is up) is the start.
/// </summary>
public static class MeasuredInstanceLoad
{
    /// <summary>The compute-scaling benchmark's results file name.</summary>
    public const string File = "compute-scaling.csv";

    /// <summary>Reads T_Load from <paramref name="resultsDirectory"/>.</summary>
    /// <param name="resultsDirectory">Normally <c>benchmarks/results</c>.</param>
    /// <returns>T_Load and a line saying where it came from.</returns>
    /// <exception cref="FileNotFoundException">The file is missing (the message names the benchmark that writes it).</exception>
    /// <exception cref="FormatException">The file lacks the columns, or no second has an instance and an answer.</exception>
    public static (TimeSpan Value, string Source) Read(string resultsDirectory)
    {
        string path = Path.Combine(resultsDirectory, File);
        if (!System.IO.File.Exists(path))
        {
            throw new FileNotFoundException($"T_Load input '{path}' does not exist: run `benchmarks/run compute-scaling` to produce it (the simulator takes T_Load from it, not from a constant).", path);
        }

        string[] lines = System.IO.File.ReadAllLines(path);
        string[] header = lines.Length > 0 ? lines[0].Split(',') : [];
        int instances = Array.IndexOf(header, "instances"), p50 = Array.IndexOf(header, "p50_ms"), p99 = Array.IndexOf(header, "p99_ms");
        if (instances < 0 || p50 < 0 || p99 < 0)
        {
            throw new FormatException($"'{path}' must have the columns instances,p50_ms,p99_ms; its header is '{(lines.Length > 0 ? lines[0] : string.Empty)}'.");
        }

        string[][] rows = [.. lines.Skip(1).Where(l => l.Length > 0).Select(l => l.Split(','))];
        static double? Ms(string field) => field.Length > 0 ? double.Parse(field, CultureInfo.InvariantCulture) : null;
        string[]? first = rows.FirstOrDefault(r => int.Parse(r[instances], CultureInfo.InvariantCulture) > 0 && Ms(r[p99]) is not null);
        double[] served = [.. rows.Select(r => Ms(r[p50])).OfType<double>().Order()];
        if (first is null || served.Length == 0)
        {
            throw new FormatException($"'{path}' has no second with an instance that answered requests.");
        }

        double held = Ms(first[p99])!.Value, median = served[served.Length / 2];
        var value = TimeSpan.FromMilliseconds(held - median);
        return (value, string.Create(
            CultureInfo.InvariantCulture,
            $"{File}: p99_ms {held:0.0} of the first second with an instance (the request held through the cold start) minus the run's median p50_ms {median:0.0} = {value.TotalSeconds:0.00} s"));
    }
}
