namespace FaaSCache.Bandwidth;

/// <summary>One bandwidth-scaled load (§4), as the bandwidth voter and the benchmarks see it.</summary>
/// <param name="At">When it finished.</param>
/// <param name="Key">The object.</param>
/// <param name="SizeBytes">S.</param>
/// <param name="Planned">The N the planner chose (or the N forced by the caller).</param>
/// <param name="Used">The instances that downloaded a range (the requester included).</param>
/// <param name="TakenBack">Ranges whose helper failed and that the requester fetched itself.</param>
/// <param name="Elapsed">From the first byte of the requester's own download to the checked object.</param>
/// <param name="Checksum">How the assembled object was checked: <c>xxh3</c>, <c>md5</c> or <c>ranges</c> (per-range checksums only).</param>
/// <param name="Reason">The planner's reason.</param>
public sealed record ScaledLoadRecord(
    DateTimeOffset At,
    string Key,
    long SizeBytes,
    int Planned,
    int Used,
    int TakenBack,
    TimeSpan Elapsed,
    string Checksum,
    string Reason);
