using FaaSCache.Diagnostics;
using System.Net.Http.Json;

namespace FaaSCache.Testing;

/// <summary>The host's admin endpoints, read through the host's own records, and waits on what they report.</summary>
public sealed partial class FaaSCacheHostProcess
{
    /// <summary>Gets <c>/admin/host/status</c>.</summary>
    public async Task<HostStatus> GetStatusAsync(CancellationToken cancellationToken = default)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(ProbeTimeout);
        HostStatus status = await Http.GetFromJsonAsync<HostStatus>("admin/host/status", Json, timeout.Token)
            ?? throw new InvalidOperationException("/admin/host/status answered null.");
        if (IsOwn(status))
        {
            lock (_gate)
            {
                _workerPids.UnionWith(status.Workers.Select(w => w.Pid).Where(p => p > 0));
            }
        }

        return status;
    }

    /// <summary>Gets <c>/admin/invocations[?function=X]</c>: the recent finished invocations, oldest first.</summary>
    public async Task<IReadOnlyList<InvocationRecord>> GetInvocationsAsync(string? function = null, CancellationToken cancellationToken = default)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(ProbeTimeout);
        string uri = function is null ? "admin/invocations" : $"admin/invocations?function={Uri.EscapeDataString(function)}";
        return await Http.GetFromJsonAsync<List<InvocationRecord>>(uri, Json, timeout.Token)
            ?? throw new InvalidOperationException($"{uri} answered null.");
    }

    /// <summary>
    /// Waits until every worker in the status has finished its handshake (state <c>running</c>); returns that status.
    /// Throws <see cref="InvalidOperationException"/> as soon as the host reports a worker that failed to start (with the
    /// worker's error in the message) or exits, and <see cref="TimeoutException"/> after <paramref name="timeout"/>
    /// (default <see cref="WorkerTimeout"/>).
    /// </summary>
    public async Task<HostStatus> WaitForWorkersAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default)
    {
        try
        {
            return await HostReadiness.WaitAsync(Http, timeout ?? WorkerTimeout, () => HasExited ? $"exited with code {_process.ExitCode}" : null, cancellationToken: cancellationToken);
        }
        catch (HostNotReadyException e) when (e.Reason is HostNotReadyReason.TimedOut)
        {
            throw new TimeoutException($"{e.Message}{Environment.NewLine}Host output:{Environment.NewLine}{Output}", e);
        }
        catch (HostNotReadyException e)
        {
            throw new InvalidOperationException($"{e.Message}{Environment.NewLine}Host output:{Environment.NewLine}{Output}", e);
        }
    }

    /// <summary>
    /// Waits until <paramref name="function"/> has at least <paramref name="count"/> finished invocations matching
    /// <paramref name="predicate"/> (default: any); returns them. Throws <see cref="TimeoutException"/> after <paramref name="timeout"/>.
    /// </summary>
    public async Task<IReadOnlyList<InvocationRecord>> WaitForInvocationsAsync(
        string function,
        int count,
        TimeSpan timeout,
        Func<InvocationRecord, bool>? predicate = null,
        CancellationToken cancellationToken = default)
    {
        IReadOnlyList<InvocationRecord> seen = [];
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            ThrowIfExited($"while waiting for invocations of '{function}'");
            seen = await GetInvocationsAsync(function, cancellationToken);
            List<InvocationRecord> matching = seen.Where(predicate ?? (_ => true)).ToList();
            if (matching.Count >= count)
            {
                return matching;
            }

            await Task.Delay(100, cancellationToken);
        }

        throw new TimeoutException(
            $"'{function}' had {seen.Count} invocations, not {count} matching ones, after {timeout.TotalSeconds:0.#} s: {JsonSerializer.Serialize(seen, Json)}" +
            $"{Environment.NewLine}Host output:{Environment.NewLine}{Output}");
    }

    /// <summary>
    /// Whether <paramref name="status"/> came from this host: two starters may be handed the same free port, and what
    /// answers on it is then the host that won the bind. On loopback the pid tells them apart (in a namespace of its own
    /// the port is the host's alone).
    /// </summary>
    private bool IsOwn(HostStatus status) => !BaseUri.IsLoopback || status.ProcessId == 0 || status.ProcessId == ProcessId;

    /// <summary>True when <c>/admin/host/status</c> answers.</summary>
    private async Task<bool> AnswersAsync(CancellationToken cancellationToken)
    {
        // The cheap loopback check only where the host listens on loopback; elsewhere (a namespace) the request tells.
        if (BaseUri.IsLoopback && !await TcpPorts.IsAcceptingAsync(Port, TimeSpan.FromSeconds(1), cancellationToken))
        {
            return false;
        }

        try
        {
            HostStatus status = await GetStatusAsync(cancellationToken);
            return IsOwn(status);
        }
        catch (Exception e) when (e is HttpRequestException or JsonException || (e is OperationCanceledException && !cancellationToken.IsCancellationRequested))
        {
            return false; // not serving yet
        }
    }
}
