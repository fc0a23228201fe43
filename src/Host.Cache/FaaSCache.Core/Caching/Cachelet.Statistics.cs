using FaaSCache.Ownership;

namespace FaaSCache.Caching;

/// <summary>Per-object statistics, kept by <see cref="AccessStatistics"/> under the cachelet's lock.</summary>
public sealed partial class Cachelet
{
    private readonly AccessStatistics _statistics = new();

    /// <summary>Statistics of one key, or null when it was never accessed.</summary>
    public ObjectStatistics? GetStatistics(string key)
    {
        lock (_gate)
        {
            return _statistics.Find(key) is { } s ? SnapshotLocked(key, s) : null;
        }
    }

    /// <summary>Statistics of every tracked key.</summary>
    public IReadOnlyList<ObjectStatistics> GetAllStatistics()
    {
        lock (_gate)
        {
            return [.. _statistics.All.Select(kv => SnapshotLocked(kv.Key, kv.Value))];
        }
    }

    private ObjectStatistics SnapshotLocked(string key, AccessStatistics.StatsState s)
        => AccessStatistics.Snapshot(key, s, _entries.TryGetValue(key, out CacheEntry? entry) ? entry : null, entry is null && _owners.IsLocalOwner(key));

    private AccessStatistics.StatsState StatsLocked(string key) => _statistics.Of(key, _entries.ContainsKey);

    private static AccessKind? AccessOf(ReadSource source, bool forPeer) => AccessStatistics.AccessOf(source, forPeer);

    private void RecordAccessLocked(string key, AccessKind? kind) => _statistics.Record(key, kind, _time.GetUtcNow(), _entries.ContainsKey);
}
