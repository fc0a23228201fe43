namespace FaaSCache.Host.Admin;

/// <summary>The body of <c>POST /admin/host/scale/status</c>, as the Functions host takes it (a <c>ScaleStatusContext</c>; metrics in it are ignored, the voters sample their own).</summary>
/// <param name="WorkerCount">The instances the app runs.</param>
public sealed record HostScaleStatusRequest(int? WorkerCount);

/// <summary>
/// The answer of <c>POST /admin/host/scale/status</c>: the Functions host's <c>AggregateScaleStatus</c> shape (vote as
/// -1/0/1, target worker count, per-monitor statuses and per-scaler results, keyed by descriptor id), plus each voter's
/// reason and metrics and the measured transfer profile.
/// </summary>
public sealed record HostScaleStatus(
    int Vote,
    int? TargetWorkerCount,
    IReadOnlyDictionary<string, HostMonitorStatus> FunctionScaleStatuses,
    IReadOnlyDictionary<string, HostTargetScalerResult> FunctionTargetScalerResults,
    string InstanceId,
    int InFlight,
    IReadOnlyList<HostVoterStatus> Voters,
    HostTransferProfile Profile);

/// <summary>A monitor's status (<c>ScaleStatus</c>).</summary>
public sealed record HostMonitorStatus(int Vote);

/// <summary>A target scaler's result (<c>TargetScalerResult</c>).</summary>
public sealed record HostTargetScalerResult(int TargetWorkerCount);

/// <summary>One voter's answer with its reason.</summary>
public sealed record HostVoterStatus(string Voter, int Vote, int? TargetWorkerCount, string Reason, IReadOnlyDictionary<string, double> Metrics);

/// <summary>The measured transfer profile (null: not measured yet).</summary>
public sealed record HostTransferProfile(double? StorageBytesPerSecond, double? StorageLatencySeconds, double? PeerBytesPerSecond, double? PeerLatencySeconds, double? InstanceLoadSeconds, double? InboundBytesPerSecond = null, string? InboundSource = null, string? InboundSuspicion = null);

/// <summary>The answer of <c>POST /admin/cache/read</c>: one read through the cache, timed on the host.</summary>
/// <param name="Key">The key.</param>
/// <param name="Bytes">The object's size.</param>
/// <param name="Source">How it was read: lh, lm, rh, rm, fallback or bypass, as the invocation records say it.</param>
/// <param name="Seconds">The read's duration on the host.</param>
/// <param name="Instances">The instances that downloaded it (1 unless it was a scaled load).</param>
/// <param name="Planned">The N the planner chose (or that was forced), when it was a scaled load.</param>
/// <param name="TakenBack">Ranges the requester fetched itself because a helper failed.</param>
/// <param name="Checksum">How an assembled object was checked (xxh3, md5, ranges), when it was a scaled load.</param>
/// <param name="Reason">The planner's reason, when it was a scaled load.</param>
public sealed record HostCacheRead(string Key, long Bytes, string Source, double Seconds, int Instances, int? Planned, int TakenBack, string? Checksum, string? Reason, IReadOnlyList<FaaSCache.Bandwidth.ScaledLoadRange>? Ranges = null);
