using FaaSCache.Memory;
using FaaSCache.Prewarm;

namespace FaaSCache.Diagnostics;

/// <summary>
/// The answer of <c>GET /admin/host/status</c>: defined once here and read by the tests, the benchmarks and the
/// <c>faascache host</c> tool, so that every reader agrees with the host on its shape.
/// </summary>
/// <param name="App">The app name.</param>
/// <param name="InstanceId">This instance's id.</param>
/// <param name="State">Initializing (the workers still indexing and loading), Running, Error or Stopping.</param>
/// <param name="Cache">on or off.</param>
/// <param name="Functions">The app's function names.</param>
/// <param name="Workers">One entry per language worker.</param>
/// <param name="Invocations">Invocation totals since start-up.</param>
/// <param name="SharedMemory">The map folder and how many maps it holds.</param>
/// <param name="Counters">The cachelet's counters (null with the cache off).</param>
/// <param name="PendingWrites">Async writes not yet in storage.</param>
/// <param name="PeerEndpoint">The peer endpoint advertised to the other instances (null with membership off).</param>
/// <param name="Members">The app's instances as this one sees them (null with membership off).</param>
/// <param name="Memory">The Memory Daemon's last sample and evictions (null with the cache off).</param>
/// <param name="Prewarm">The Load Daemon's progress and the keys it loaded (null with the cache off).</param>
/// <param name="Error">Why the host is in Error, or null.</param>
/// <param name="ProcessId">The host's process id: a starter that probes a port tells its own host from another process that took the port first.</param>
public sealed record HostStatus(
    string App,
    string InstanceId,
    string State,
    string Cache,
    IReadOnlyList<string> Functions,
    IReadOnlyList<HostWorkerStatus> Workers,
    HostInvocationTotals Invocations,
    HostSharedMemoryStatus SharedMemory,
    CacheletCounters? Counters,
    long PendingWrites,
    string? PeerEndpoint,
    IReadOnlyList<HostMemberStatus>? Members,
    MemoryDaemonStatus? Memory = null,
    LoadDaemonStatus? Prewarm = null,
    string? Error = null,
    int ProcessId = 0)
{
    /// <summary>Gets the member ids this instance sees, in order.</summary>
    [JsonIgnore]
    public IReadOnlyList<string> MemberIds => Members?.Select(m => m.Id).Order(StringComparer.Ordinal).ToList() ?? [];

    /// <summary>Gets the counters; throws when the cache is off.</summary>
    [JsonIgnore]
    public CacheletCounters Count => Counters ?? throw new InvalidOperationException($"{InstanceId} has no cache counters (cache off?).");

    /// <summary>The worker of <paramref name="language"/>; throws when the host has none.</summary>
    public HostWorkerStatus Worker(string language) =>
        Workers.FirstOrDefault(w => string.Equals(w.Language, language, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"The host runs no {language} worker (workers: {string.Join(", ", Workers.Select(w => w.Language))}).");
}

/// <summary>
/// One language worker: its current process id (0 when none runs), how often it was restarted, its state (starting,
/// running, restarting, failed, stopped) and, when failed, why (exit code and the worker's last output lines).
/// </summary>
/// <param name="Language">The language.</param>
/// <param name="Pid">The current worker process id, or 0.</param>
/// <param name="Restarts">How often the worker was restarted.</param>
/// <param name="State">starting, running, restarting, failed or stopped.</param>
/// <param name="Error">Why the host gave up starting it, or null.</param>
public sealed record HostWorkerStatus(string Language, int Pid, int Restarts, string State, string? Error)
{
    /// <summary>Gets a value indicating whether the worker has loaded its functions.</summary>
    [JsonIgnore]
    public bool IsRunning => State == "running";

    /// <summary>Gets a value indicating whether the host gave up starting the worker.</summary>
    [JsonIgnore]
    public bool IsFailed => State == "failed";
}

/// <summary>Invocation totals since the host started.</summary>
/// <param name="Succeeded">Invocations that succeeded.</param>
/// <param name="Failed">Invocations that failed.</param>
/// <param name="BytesCopied">Bytes the host copied to deliver inputs and store outputs.</param>
public sealed record HostInvocationTotals(long Succeeded, long Failed, long BytesCopied);

/// <summary>The host's shared-memory map folder and how many maps it holds.</summary>
/// <param name="Directory">The map folder.</param>
/// <param name="Maps">The number of maps in it that this instance owns.</param>
public sealed record HostSharedMemoryStatus(string Directory, long Maps);

/// <summary>One member of the app's membership list.</summary>
/// <param name="Id">The instance id.</param>
/// <param name="Endpoint">Its peer endpoint.</param>
/// <param name="LastHeartbeat">Its last heartbeat.</param>
public sealed record HostMemberStatus(string Id, string? Endpoint, DateTimeOffset LastHeartbeat);
