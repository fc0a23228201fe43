namespace FaaSCache.Prewarm;

/// <summary>An object the Load Daemon should load, with why (§3.3).</summary>
/// <param name="Key">The object key.</param>
/// <param name="SizeBytes">The size at the latest snapshot that cached it.</param>
/// <param name="Version">The version (ETag) at the latest snapshot that cached it.</param>
/// <param name="HitRate">Hits over reads, own and peer together, across the merged snapshots (0 with no reads).</param>
/// <param name="Accesses">Accesses across the merged snapshots (see <see cref="PrewarmSelector.Select"/>).</param>
/// <param name="ExpectedBenefit">Accesses times the object's miss cost in seconds: what loading it is expected to save.</param>
public sealed record PrewarmCandidate(string Key, long SizeBytes, string? Version, double HitRate, long Accesses, double ExpectedBenefit);
