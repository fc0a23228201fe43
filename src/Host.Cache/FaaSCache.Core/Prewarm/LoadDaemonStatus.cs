namespace FaaSCache.Prewarm;

/// <summary>The Load Daemon's state for <c>GET /admin/host/status</c>: what it read, chose and loaded (§3.3).</summary>
/// <param name="Enabled">Whether <c>prewarm.enabled</c> is on.</param>
/// <param name="State">off, waiting, reading, loading, paused (an invocation runs), done or failed.</param>
/// <param name="HitRateThreshold">The hit-rate threshold in force.</param>
/// <param name="SnapshotsRead">Snapshots merged.</param>
/// <param name="SnapshotsSkipped">Snapshots that were corrupt or unreadable.</param>
/// <param name="InvocationsPerHour">The invocation frequency estimated from the snapshots.</param>
/// <param name="LookBack">The look-back window derived from it.</param>
/// <param name="Candidates">Objects the selection chose, over all owners.</param>
/// <param name="Owned">Of those, the ones this instance owns under the ring.</param>
/// <param name="Loaded">Objects loaded.</param>
/// <param name="BytesLoaded">Bytes loaded.</param>
/// <param name="AlreadyCached">Objects already cached (an invocation read them first).</param>
/// <param name="SkippedNoRoom">Objects that did not fit in the free capacity.</param>
/// <param name="SkippedChanged">Objects skipped because their version changed and the preset requires the current one.</param>
/// <param name="SkippedMissing">Objects no longer in storage (or excluded by <c>doNotCache</c>).</param>
/// <param name="Failed">Loads that failed (logged).</param>
/// <param name="Pauses">How often an invocation held pre-warm up or interrupted it.</param>
/// <param name="Elapsed">Time from start to done.</param>
/// <param name="LoadedKeys">The keys loaded, in load order (the first 100).</param>
/// <param name="LastSnapshot">The key of the snapshot this instance wrote at its last unload in this process (null before).</param>
public sealed record LoadDaemonStatus(
    bool Enabled,
    string State,
    double HitRateThreshold,
    int SnapshotsRead,
    int SnapshotsSkipped,
    double InvocationsPerHour,
    TimeSpan LookBack,
    int Candidates,
    int Owned,
    int Loaded,
    long BytesLoaded,
    int AlreadyCached,
    int SkippedNoRoom,
    int SkippedChanged,
    int SkippedMissing,
    int Failed,
    long Pauses,
    TimeSpan Elapsed,
    IReadOnlyList<string> LoadedKeys,
    string? LastSnapshot);
