namespace FaaSCache.Caching;

/// <summary>What a pre-warm load of one key did.</summary>
public enum PrewarmLoadOutcome
{
    /// <summary>The current version is now cached.</summary>
    Loaded,

    /// <summary>The key was cached (or being read) already: nothing was downloaded.</summary>
    AlreadyCached,

    /// <summary>It did not fit in the free capacity (pre-warm never evicts).</summary>
    NoRoom,

    /// <summary>The blob no longer exists.</summary>
    NotFound,

    /// <summary>The key matches <c>doNotCache</c>.</summary>
    Excluded,
}

/// <summary>The outcome of <see cref="Cachelet.PrewarmAsync"/>, with the version and bytes loaded.</summary>
/// <param name="Outcome">What happened.</param>
/// <param name="Version">The version loaded (null unless loaded).</param>
/// <param name="Bytes">The bytes loaded (0 unless loaded).</param>
public readonly record struct PrewarmLoadResult(PrewarmLoadOutcome Outcome, string? Version = null, long Bytes = 0);
