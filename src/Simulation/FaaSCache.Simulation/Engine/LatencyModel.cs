namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Access latencies from this project's own benchmark results (medians): <c>cachelet-read.csv</c> gives local hit
/// (<c>lh</c>, or <c>lh_strong</c> with the version check of the <c>strong</c> preset), local miss (<c>lm</c>),
/// storage without a cache (<c>storage_direct</c>) and the version check alone (<c>conditional_head</c>);
/// <c>remote-read.csv</c> gives remote hit (<c>rh</c>) and remote miss (<c>rm</c>). Under <c>strong</c> a remote hit
/// also pays the version check. Writes cost a storage write both with and without the cache (sync persistence);
/// no write benchmark exists, so they are costed as <c>storage_direct</c> on both sides.
/// </summary>
public sealed class LatencyModel
{
    /// <summary>The cachelet read benchmark's results file name.</summary>
    public const string CacheletReadFile = "cachelet-read.csv";

    /// <summary>The remote read benchmark's results file name.</summary>
    public const string RemoteReadFile = "remote-read.csv";

    /// <summary>Creates a model from curves (tests build small ones by hand).</summary>
    /// <param name="localHit">Local hit.</param>
    /// <param name="localMiss">Local miss.</param>
    /// <param name="remoteHit">Remote hit.</param>
    /// <param name="remoteMiss">Remote miss.</param>
    /// <param name="storage">Storage without a cache (also the cost of a write and of an object the cache cannot hold).</param>
    public LatencyModel(LatencyCurve localHit, LatencyCurve localMiss, LatencyCurve remoteHit, LatencyCurve remoteMiss, LatencyCurve storage)
    {
        LocalHit = localHit;
        LocalMiss = localMiss;
        RemoteHit = remoteHit;
        RemoteMiss = remoteMiss;
        Storage = storage;
    }

    /// <summary>Gets the local hit curve.</summary>
    public LatencyCurve LocalHit { get; }

    /// <summary>Gets the local miss curve.</summary>
    public LatencyCurve LocalMiss { get; }

    /// <summary>Gets the remote hit curve.</summary>
    public LatencyCurve RemoteHit { get; }

    /// <summary>Gets the remote miss curve.</summary>
    public LatencyCurve RemoteMiss { get; }

    /// <summary>Gets the storage curve.</summary>
    public LatencyCurve Storage { get; }

    /// <summary>Gets the storage profile the storage side comes from (<c>measured</c>: this machine's Azurite, as the CSVs have it).</summary>
    public string Profile { get; init; } = "measured";

    /// <summary>
    /// A storage profile by its name: <c>measured</c> (null: the benchmark CSVs' own storage, Azurite on this machine),
    /// <c>paper</c> (<see cref="StorageProfile.Paper"/>) or a file written by <c>faascache storage probe --out</c>.
    /// </summary>
    public static StorageProfile? ProfileNamed(string spec) => spec switch
    {
        "measured" => null,
        "paper" => StorageProfile.Paper,
        _ => StorageProfile.Load(spec),
    };

    /// <summary>
    /// Reads the model as <see cref="Load(string, bool)"/> does, with the storage side from <paramref name="storage"/>: the
    /// cache's own costs stay measured (a hit in this process, a remote hit over the peer link, what a miss adds to the
    /// download it streams), and what storage costs (the first byte, the rate, the version check) is the profile's. A
    /// storage read of s bytes is <see cref="StorageProfile.ReadMs"/>; a local miss that plus the cache's own overhead
    /// measured here (lm minus storage_direct); a strong hit the measured hit plus the profile's version check; a remote
    /// miss the longer of the storage read and the remote hit, plus the overhead measured over the longer of the two.
    /// </summary>
    /// <param name="resultsDirectory">The directory holding the benchmark CSVs.</param>
    /// <param name="strongConsistency">True for the <c>strong</c> preset (hits pay the profile's version check).</param>
    /// <param name="storage">The storage profile; null: the CSVs' own storage.</param>
    /// <param name="missOverhead">
    /// False to price a miss as vanilla's storage read (§6.1: "vanilla performs as FaaS$ LM"), without what this
    /// implementation measurably adds to it: the row that shows what the overhead costs.
    /// </param>
    public static LatencyModel Load(string resultsDirectory, bool strongConsistency, StorageProfile? storage, bool missOverhead = true)
    {
        if (storage is null)
        {
            LatencyModel measured = Load(resultsDirectory, strongConsistency);
            return missOverhead
                ? measured
                : new LatencyModel(measured.LocalHit, measured.Storage, measured.RemoteHit, MaxOf(measured.Storage, measured.RemoteHit), measured.Storage);
        }

        var local = ReadMedians(Path.Combine(resultsDirectory, CacheletReadFile), "cachelet-read");
        var remote = ReadMedians(Path.Combine(resultsDirectory, RemoteReadFile), "remote-read");
        LatencyCurve Measured(Dictionary<string, List<(long, double)>> from, string file, string path)
            => from.TryGetValue(path, out var points)
                ? new LatencyCurve(points)
                : throw new FormatException($"{file} has no rows for path '{path}' (it has: {string.Join(", ", from.Keys)}); rerun its benchmark.");

        LatencyCurve lh = Measured(local, CacheletReadFile, "lh"), lm = Measured(local, CacheletReadFile, "lm"), direct = Measured(local, CacheletReadFile, "storage_direct");
        LatencyCurve rh = Measured(remote, RemoteReadFile, "rh"), rm = Measured(remote, RemoteReadFile, "rm");
        long[] sizes = [.. local["lh"].Select(p => p.Item1).Concat(remote["rh"].Select(p => p.Item1)).Distinct().Order()];
        double Read(long s) => storage.ReadMs(s) * 1000;
        double check = strongConsistency ? storage.VersionCheckMs * 1000 : 0;
        LatencyCurve Curve(Func<long, double> micros) => new(sizes.Select(s => (s, micros(s))));
        double overhead = missOverhead ? 1 : 0;
        return new LatencyModel(
            Curve(s => lh.Micros(s) + check),
            Curve(s => Read(s) + (overhead * Math.Max(0, lm.Micros(s) - direct.Micros(s)))),
            Curve(s => rh.Micros(s) + check),
            Curve(s => Math.Max(Read(s), rh.Micros(s)) + (overhead * Math.Max(0, rm.Micros(s) - Math.Max(direct.Micros(s), rh.Micros(s))))),
            Curve(Read))
        {
            Profile = storage.Name,
        };
    }

    /// <summary>Reads the model from <paramref name="resultsDirectory"/> (normally <c>benchmarks/results</c>).</summary>
    /// <param name="resultsDirectory">The directory holding the benchmark CSVs.</param>
    /// <param name="strongConsistency">True for the <c>strong</c> preset (hits pay a version check in storage).</param>
    /// <returns>The model.</returns>
    /// <exception cref="FileNotFoundException">A results file is missing (the message names it and the benchmark that writes it).</exception>
    /// <exception cref="FormatException">A file lacks a column or a path the model needs.</exception>
    public static LatencyModel Load(string resultsDirectory, bool strongConsistency)
    {
        var local = ReadMedians(Path.Combine(resultsDirectory, CacheletReadFile), "cachelet-read");
        var remote = ReadMedians(Path.Combine(resultsDirectory, RemoteReadFile), "remote-read");
        LatencyCurve Curve(Dictionary<string, List<(long, double)>> from, string file, string path)
            => from.TryGetValue(path, out var points)
                ? new LatencyCurve(points)
                : throw new FormatException($"{file} has no rows for path '{path}' (it has: {string.Join(", ", from.Keys)}); rerun its benchmark.");

        LatencyCurve remoteHit = Curve(remote, RemoteReadFile, "rh");
        if (strongConsistency)
        {
            // strong: the reader checks the version in storage before using the owner's copy.
            LatencyCurve head = Curve(local, CacheletReadFile, "conditional_head");
            LatencyCurve rh = remoteHit;
            long[] sizes = remote["rh"].Select(p => p.Item1).ToArray();
            remoteHit = new LatencyCurve(sizes.Select(s => (s, rh.Micros(s) + head.Micros(s))));
        }

        return new LatencyModel(
            Curve(local, CacheletReadFile, strongConsistency ? "lh_strong" : "lh"),
            Curve(local, CacheletReadFile, "lm"),
            remoteHit,
            Curve(remote, RemoteReadFile, "rm"),
            Curve(local, CacheletReadFile, "storage_direct"));
    }

    /// <summary>
    /// The version check as a fraction of a first byte, measured here: <c>conditional_head</c> over
    /// <c>storage_direct</c> at the smallest size both rows of <c>cachelet-read.csv</c> have (a read that small is all
    /// first byte). §3.2 gives the check only as "less than 5 ms" against a 10 ms read.
    /// </summary>
    public static double MeasuredVersionCheckFraction(string resultsDirectory)
    {
        var local = ReadMedians(Path.Combine(resultsDirectory, CacheletReadFile), "cachelet-read");
        if (!local.TryGetValue("conditional_head", out var head) || !local.TryGetValue("storage_direct", out var direct))
        {
            throw new FormatException($"{CacheletReadFile} needs rows for 'conditional_head' and 'storage_direct' (it has: {string.Join(", ", local.Keys)}); rerun `benchmarks/run cachelet-read`.");
        }

        long smallest = head.Select(p => p.Item1).Intersect(direct.Select(p => p.Item1)).DefaultIfEmpty(-1).Min();
        if (smallest < 0)
        {
            throw new FormatException($"{CacheletReadFile} has no size with both 'conditional_head' and 'storage_direct'; rerun `benchmarks/run cachelet-read`.");
        }

        return head.First(p => p.Item1 == smallest).Item2 / direct.First(p => p.Item1 == smallest).Item2;
    }

    private static LatencyCurve MaxOf(LatencyCurve a, LatencyCurve b)
    {
        long[] sizes = [.. a.Sizes.Concat(b.Sizes).Distinct().Order()];
        return new LatencyCurve(sizes.Select(s => (s, Math.Max(a.Micros(s), b.Micros(s)))));
    }

    /// <summary>The (size, p50 microseconds) points of each path of a benchmark's results file.</summary>
    internal static Dictionary<string, List<(long, double)>> ReadMedians(string file, string benchmark)
    {
        if (!File.Exists(file))
        {
            throw new FileNotFoundException(
                $"Latency model input '{file}' does not exist: run `benchmarks/run {benchmark}` to produce it (the simulator takes its latencies from it, not from constants).",
                file);
        }

        string[] lines = File.ReadAllLines(file);
        string[] header = lines.Length > 0 ? lines[0].Split(',') : [];
        int path = Array.IndexOf(header, "path"), size = Array.IndexOf(header, "size_bytes"), p50 = Array.IndexOf(header, "p50_us");
        if (path < 0 || size < 0 || p50 < 0)
        {
            throw new FormatException($"'{file}' must have the columns path,size_bytes,p50_us; its header is '{(lines.Length > 0 ? lines[0] : string.Empty)}'.");
        }

        var result = new Dictionary<string, List<(long, double)>>(StringComparer.Ordinal);
        foreach (string line in lines.Skip(1).Where(l => l.Length > 0))
        {
            string[] f = line.Split(',');
            if (!result.TryGetValue(f[path], out var points))
            {
                points = [];
                result[f[path]] = points;
            }

            points.Add((long.Parse(f[size], CultureInfo.InvariantCulture), double.Parse(f[p50], CultureInfo.InvariantCulture)));
        }

        return result;
    }
}
