namespace FaaSCache.Bandwidth;

/// <summary>
/// What a bandwidth-scaled load costs on this instance's links, as measured (§4: T_Load, BW_BS and BW_Inst are profiled,
/// not configured). A null value has not been measured yet; the planner does not scale on guesses.
/// </summary>
/// <param name="StorageBytesPerSecond">BW_BS: one instance's download rate from blob storage.</param>
/// <param name="StorageLatency">Time to the first byte of a storage GET.</param>
/// <param name="PeerBytesPerSecond">BW_Inst: the rate of a transfer from another instance to this one.</param>
/// <param name="PeerLatency">Time to the first byte of a peer transfer.</param>
/// <param name="InstanceLoad">T_Load: from asking the scale controller for an instance to its joining the app.</param>
/// <param name="InboundBytesPerSecond">
/// What a scaled load into this instance carried when it fell well short of its prediction (the requester's storage and
/// peer bytes came in over one link that BW_BS and BW_Inst, measured apart, do not show): the planner predicts no split
/// load faster than this. Null while no recent scaled load fell short (<see cref="TransferProfiler"/>).
/// </param>
/// <param name="InboundSource">Which loads set <see cref="InboundBytesPerSecond"/>, for the plan's reason and the benchmarks.</param>
/// <param name="InboundConfirmed">
/// A split load made while the limit held carried no more than it: the limit is confirmed and not tested again (by a
/// split of one instance more) while it holds.
/// </param>
public sealed record TransferProfile(
    double? StorageBytesPerSecond,
    TimeSpan? StorageLatency,
    double? PeerBytesPerSecond,
    TimeSpan? PeerLatency,
    TimeSpan? InstanceLoad,
    double? InboundBytesPerSecond = null,
    string? InboundSource = null,
    bool InboundConfirmed = false)
{
    /// <summary>Gets a profile with nothing measured.</summary>
    public static TransferProfile Unmeasured { get; } = new(null, null, null, null, null);

    /// <summary>Gets a value indicating whether both bandwidths are known (the planner needs them).</summary>
    public bool HasBandwidths => StorageBytesPerSecond > 0 && PeerBytesPerSecond > 0;
}
