using FaaSCache.Diagnostics;

namespace FaaSCache.TestSupport;

/// <summary>The FaaSCache host's <c>/admin/host/status</c> answer.</summary>
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
    long PendingWrites)
{
    /// <summary>The worker of <paramref name="language"/>; throws when the host has none.</summary>
    public HostWorkerStatus Worker(string language) =>
        Workers.FirstOrDefault(w => string.Equals(w.Language, language, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"The host runs no {language} worker (workers: {string.Join(", ", Workers.Select(w => w.Language))}).");
}

/// <summary>
/// One language worker: its current process id (0 when none runs), how often it was restarted, its state (starting,
/// running, restarting, failed, stopped) and, when failed, why (exit code and the worker's last output lines).
/// </summary>
public sealed record HostWorkerStatus(string Language, int Pid, int Restarts, string State, string? Error)
{
    /// <summary>Gets a value indicating whether the worker has loaded its functions.</summary>
    public bool IsRunning => State == "running";

    /// <summary>Gets a value indicating whether the host gave up starting the worker.</summary>
    public bool IsFailed => State == "failed";
}

/// <summary>Invocation totals since the host started.</summary>
public sealed record HostInvocationTotals(long Succeeded, long Failed, long BytesCopied);

/// <summary>The host's shared-memory map folder and how many maps it holds.</summary>
public sealed record HostSharedMemoryStatus(string Directory, long Maps);

/// <summary>One entry of <c>/admin/invocations</c>.</summary>
public sealed record HostInvocation(
    string InvocationId,
    string Function,
    string Trigger,
    DateTimeOffset StartedAt,
    double DurationMs,
    string Status,
    string? Error,
    IReadOnlyList<HostInvocationInput> Inputs,
    IReadOnlyList<HostInvocationOutput> Outputs)
{
    /// <summary>The input record of binding <paramref name="binding"/>.</summary>
    public HostInvocationInput Input(string binding) =>
        Inputs.FirstOrDefault(i => string.Equals(i.Binding, binding, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"Invocation {InvocationId} of '{Function}' has no input '{binding}' (inputs: {string.Join(", ", Inputs.Select(i => i.Binding))}).");

    /// <summary>The output record of binding <paramref name="binding"/>.</summary>
    public HostInvocationOutput Output(string binding) =>
        Outputs.FirstOrDefault(o => string.Equals(o.Binding, binding, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"Invocation {InvocationId} of '{Function}' has no output '{binding}' (outputs: {string.Join(", ", Outputs.Select(o => o.Binding))}).");
}

/// <summary>How one blob input reached the worker: <c>Source</c> is lh, lm, rh, rm, bypass, storage (cache off) or missing.</summary>
public sealed record HostInvocationInput(string Binding, string Key, string Source, string? MapName, long Bytes, long BytesCopied);

/// <summary>What happened to one blob output.</summary>
public sealed record HostInvocationOutput(string Binding, string Key, string? MapName, long Bytes, bool Adopted, bool Persisted, long BytesCopied);
