namespace FaaSCache.Prewarm;

/// <summary>The metadata one cachelet records when its instance unloads, stamped with the unload time (§3.3).</summary>
public sealed record UnloadSnapshot
{
    /// <summary>Gets the app the cachelet belonged to.</summary>
    public required string AppName { get; init; }

    /// <summary>Gets the instance that took the snapshot.</summary>
    public required string InstanceId { get; init; }

    /// <summary>Gets the unload time.</summary>
    public required DateTimeOffset TakenAt { get; init; }

    /// <summary>Gets one entry per object the cachelet tracked.</summary>
    public required IReadOnlyList<SnapshotEntry> Entries { get; init; }
}
