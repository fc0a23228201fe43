using FaaSCache.Caching.Index;

namespace FaaSCache.Simulation.Engine;

/// <summary>A cached object in a simulated cachelet: a size and a version, kept by the cachelet's own <see cref="CacheIndex{TKey, TEntry}"/>.</summary>
internal sealed class SimEntry(int key, long size, int version, bool owned, bool large) : IndexedEntry<int, SimEntry>(key, owned, large)
{
    public override long Size { get; } = size;

    public int Version { get; } = version;
}
