namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The published statistics of the Azure Functions blob trace (Faa$T §2, Fig. 2) that a generator claims to follow,
/// counted over a trace: the share of apps that read a blob again in another invocation, the first accesses (the
/// accesses no cache can serve: the first of each app's blob), and what an ideal cache of unlimited size would save
/// (the other reads: their share of the accesses and of the bytes). Apps must come whole (the trace's files are
/// grouped by app; the generator streams app by app).
/// </summary>
public sealed class TraceStatistics
{
    private readonly Dictionary<string, string> _firstInvocation = new(StringComparer.Ordinal);
    private string? _app;
    private bool _appReuses;

    /// <summary>The paper's figures: 32% of apps reuse a blob; 20.3 M first accesses of 44.3 M; an ideal cache saves 27.0% of the traffic and 54.3% of the accesses.</summary>
    public static readonly (double ReuseShare, double FirstAccessShare, double TrafficSaved, double AccessesSaved) Published = (0.32, 20.3 / 44.3, 0.270, 0.543);

    /// <summary>Gets the number of accesses counted (rows with a size).</summary>
    public long Accesses { get; private set; }

    /// <summary>Gets the number of first accesses (the first access to each of an app's blobs).</summary>
    public long FirstAccesses { get; private set; }

    /// <summary>Gets the bytes of all accesses.</summary>
    public double Bytes { get; private set; }

    /// <summary>Gets the bytes of reads an ideal cache would have served (reads that are not first accesses).</summary>
    public double SavedBytes { get; private set; }

    /// <summary>Gets the reads an ideal cache would have served.</summary>
    public long SavedReads { get; private set; }

    /// <summary>Gets the number of apps.</summary>
    public int Apps { get; private set; }

    /// <summary>Gets the number of apps that read a blob in an invocation after the one that first touched it.</summary>
    public int AppsReusing { get; private set; }

    /// <summary>Counts one access.</summary>
    public void Add(in BlobAccess access)
    {
        if (double.IsNaN(access.BlobBytes))
        {
            return;
        }

        if (!string.Equals(access.AppName, _app, StringComparison.Ordinal))
        {
            EndApp();
            _app = access.AppName;
            Apps++;
        }

        Accesses++;
        Bytes += access.BlobBytes;
        if (!_firstInvocation.TryGetValue(access.BlobName, out string? first))
        {
            _firstInvocation[access.BlobName] = access.InvocationId;
            FirstAccesses++;
            return;
        }

        if (access.IsRead)
        {
            SavedReads++;
            SavedBytes += access.BlobBytes;
            _appReuses |= !string.Equals(first, access.InvocationId, StringComparison.Ordinal);
        }
    }

    /// <summary>Counts every access of <paramref name="trace"/>, passing each on (so a replay can read the same stream).</summary>
    public IEnumerable<BlobAccess> Count(IEnumerable<BlobAccess> trace)
    {
        foreach (BlobAccess access in trace)
        {
            Add(access);
            yield return access;
        }

        EndApp();
    }

    /// <summary>Gets the share of apps that reuse a blob across invocations.</summary>
    public double ReuseShare => Apps == 0 ? 0 : (double)AppsReusing / Apps;

    /// <summary>Gets the share of accesses that are first accesses.</summary>
    public double FirstAccessShare => Accesses == 0 ? 0 : (double)FirstAccesses / Accesses;

    /// <summary>Gets the share of the bytes an ideal cache saves.</summary>
    public double TrafficSaved => Bytes == 0 ? 0 : SavedBytes / Bytes;

    /// <summary>Gets the share of the accesses an ideal cache saves.</summary>
    public double AccessesSaved => Accesses == 0 ? 0 : (double)SavedReads / Accesses;

    private void EndApp()
    {
        if (_app is not null && _appReuses)
        {
            AppsReusing++;
        }

        _appReuses = false;
        _firstInvocation.Clear();
        _app = null;
    }
}
