namespace FaaSCache.Simulation.Engine;

/// <summary>
/// One app's accesses in time order, compacted for replay: keys, invocations and versions as small integers.
/// Built by <see cref="AppTraceBuilder"/>.
/// </summary>
public sealed class AppTrace
{
    internal AppTrace(string appName, long[] timeMs, int[] key, int[] invocation, long[] size, bool[] write, int[] version, string[] keys, int invocations)
    {
        LastAccess = new int[invocations];
        for (int i = 0; i < invocation.Length; i++)
        {
            LastAccess[invocation[i]] = i;
        }

        AppName = appName;
        TimeMs = timeMs;
        Key = key;
        Invocation = invocation;
        Size = size;
        Write = write;
        Version = version;
        Keys = keys;
        Invocations = invocations;
        KeyIds = new Dictionary<string, int>(keys.Length, StringComparer.Ordinal);
        for (int i = 0; i < keys.Length; i++)
        {
            KeyIds[keys[i]] = i;
        }
    }

    /// <summary>Gets the app.</summary>
    public string AppName { get; }

    /// <summary>Gets the number of accesses.</summary>
    public int Count => TimeMs.Length;

    /// <summary>Gets the number of invocations.</summary>
    public int Invocations { get; }

    /// <summary>Gets the blob names by key id.</summary>
    public IReadOnlyList<string> Keys { get; }

    internal Dictionary<string, int> KeyIds { get; }

    internal long[] TimeMs { get; }

    internal int[] Key { get; }

    /// <summary>Gets each access's invocation ordinal (0 for the first invocation seen in time order).</summary>
    internal int[] Invocation { get; }

    /// <summary>Gets the index of each invocation's last access (by invocation ordinal).</summary>
    internal int[] LastAccess { get; }

    internal long[] Size { get; }

    internal bool[] Write { get; }

    /// <summary>Gets the key's version once the access is done (a write, or a read that saw a new ETag, moves it on).</summary>
    internal int[] Version { get; }
}
