namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Collects one app's rows (in any order) and builds its <see cref="AppTrace"/>. Rows without a size (NaN) or that
/// neither read nor write are skipped; a row that both reads and writes counts as a write.
/// </summary>
public sealed class AppTraceBuilder
{
    private readonly Dictionary<string, int> _keys = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _invocations = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _etags = new(StringComparer.Ordinal);
    private readonly List<long> _time = [];
    private readonly List<int> _key = [];
    private readonly List<int> _invocation = [];
    private readonly List<int> _etag = [];
    private readonly List<long> _size = [];
    private readonly List<bool> _write = [];

    /// <summary>Creates a builder for <paramref name="appName"/>.</summary>
    /// <param name="appName">The app.</param>
    public AppTraceBuilder(string appName) => AppName = appName;

    /// <summary>Gets the app.</summary>
    public string AppName { get; }

    /// <summary>Gets the rows kept so far.</summary>
    public int Count => _time.Count;

    /// <summary>Gets the rows skipped (no size, or neither read nor write).</summary>
    public long Skipped { get; private set; }

    /// <summary>Adds a row of this app.</summary>
    /// <param name="row">The row.</param>
    public void Add(in BlobAccess row)
    {
        if (double.IsNaN(row.BlobBytes) || row.BlobBytes < 0 || (!row.IsRead && !row.IsWrite))
        {
            Skipped++;
            return;
        }

        _time.Add(row.TimestampMs);
        _key.Add(Intern(_keys, row.BlobName));
        _invocation.Add(Intern(_invocations, row.InvocationId));
        _etag.Add(Intern(_etags, row.ETag));
        _size.Add((long)row.BlobBytes);
        _write.Add(row.IsWrite);
    }

    /// <summary>Sorts the rows by time (stable) and derives invocation ordinals and versions.</summary>
    /// <returns>The app's trace.</returns>
    public AppTrace Build()
    {
        int n = _time.Count;
        int[] order = Enumerable.Range(0, n).ToArray();
        long[] times = _time.ToArray();
        // Stable: rows of the same millisecond keep file order (an invocation's write before its read).
        Array.Sort(order, (a, b) => times[a] != times[b] ? times[a].CompareTo(times[b]) : a.CompareTo(b));

        long[] timeMs = new long[n], size = new long[n];
        int[] key = new int[n], invocation = new int[n], version = new int[n];
        bool[] write = new bool[n];
        int[] invocationOrdinal = Enumerable.Repeat(-1, _invocations.Count).ToArray();
        int[] lastEtag = Enumerable.Repeat(-1, _keys.Count).ToArray();
        int[] keyVersion = new int[_keys.Count];
        int invocations = 0;
        for (int i = 0; i < n; i++)
        {
            int r = order[i];
            timeMs[i] = times[r];
            key[i] = _key[r];
            size[i] = _size[r];
            write[i] = _write[r];
            int inv = _invocation[r];
            if (invocationOrdinal[inv] < 0)
            {
                invocationOrdinal[inv] = invocations++;
            }

            invocation[i] = invocationOrdinal[inv];
            int k = key[i], etag = _etag[r];
            // A write makes a new version; a read that sees another ETag means someone else wrote the blob.
            if (write[i] || (lastEtag[k] >= 0 && lastEtag[k] != etag))
            {
                keyVersion[k]++;
            }

            lastEtag[k] = etag;
            version[i] = keyVersion[k];
        }

        string[] keys = new string[_keys.Count];
        foreach ((string name, int id) in _keys)
        {
            keys[id] = name;
        }

        return new AppTrace(AppName, timeMs, key, invocation, size, write, version, keys, invocations);
    }

    private static int Intern(Dictionary<string, int> ids, string value)
    {
        if (!ids.TryGetValue(value, out int id))
        {
            id = ids.Count;
            ids[value] = id;
        }

        return id;
    }
}
