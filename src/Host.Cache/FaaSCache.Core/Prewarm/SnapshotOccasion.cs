namespace FaaSCache.Prewarm;

/// <summary>When a snapshot is written.</summary>
public enum SnapshotOccasion
{
    /// <summary>At unload (scale-in, scale to zero, shutdown).</summary>
    Unload,

    /// <summary>When new members joined the ring, for their Load Daemons.</summary>
    RingGrew,
}
