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
/// <param name="Ranges">Where the time went, range by range (null when not recorded).</param>
public sealed record ScaledLoadRecord(
    DateTimeOffset At,
    string Key,
    long SizeBytes,
    int Planned,
    int Used,
    int TakenBack,
    TimeSpan Elapsed,
    string Checksum,
    string Reason,
    IReadOnlyList<ScaledLoadRange>? Ranges = null);

/// <summary>One range of a scaled load: who fetched it, and when (ms from the load's start).</summary>
/// <param name="Instance">The member that fetched it, or <c>requester</c>.</param>
/// <param name="Offset">Its first byte.</param>
/// <param name="Bytes">Its length.</param>
/// <param name="StartMs">When it was asked for (the requester: when its share began).</param>
/// <param name="FirstByteMs">When its first byte arrived.</param>
/// <param name="EndMs">When its last byte was in the map.</param>
public sealed record ScaledLoadRange(string Instance, long Offset, long Bytes, double StartMs, double FirstByteMs, double EndMs)
{
    /// <summary>Gets the rate its bytes arrived at after the first, in MB/s.</summary>
    public double MegabytesPerSecond => EndMs > FirstByteMs ? Bytes / 1e3 / (EndMs - FirstByteMs) : 0;
}
