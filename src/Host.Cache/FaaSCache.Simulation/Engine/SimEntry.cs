namespace FaaSCache.Simulation.Engine;

/// <summary>A cached object in a simulated cachelet.</summary>
internal sealed class SimEntry(int key, long size, int version, bool owned, bool large)
{
    public int Key { get; } = key;

    public long Size { get; } = size;

    public int Version { get; } = version;

    public bool Owned { get; set; } = owned;

    public bool Large { get; } = large;

    public DateTimeOffset? ExpiresAt { get; init; }

    public long LastTouch { get; set; }

    public LinkedListNode<SimEntry>? Node { get; set; }
}
