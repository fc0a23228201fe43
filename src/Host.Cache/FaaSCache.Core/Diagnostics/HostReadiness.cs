using System.Net.Http.Json;

namespace FaaSCache.Diagnostics;

/// <summary>
/// The one rule for "a host is ready", shared by the scale controller, the tests and the benchmarks: <c>GET
/// /admin/host/status</c> answers with the host <c>Running</c> (every worker has indexed and loaded the app's functions)
/// and every language worker in it is <c>running</c>. A host in <c>Error</c>, a worker the host gave up on, or a host
/// process that exits, ends the wait at once with the reason rather than at the timeout.
/// </summary>
public static class HostReadiness
{
    /// <summary>Gets the JSON options of the admin endpoints (web defaults: camelCase names).</summary>
    public static JsonSerializerOptions Json { get; } = new(JsonSerializerDefaults.Web);

    /// <summary>Gets <c>/admin/host/status</c> from the host at <paramref name="http"/>'s base address, or null while it does not answer.</summary>
    public static async Task<HostStatus?> TryGetStatusAsync(HttpClient http, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(http);
        try
        {
            return await http.GetFromJsonAsync<HostStatus>(new Uri("admin/host/status", UriKind.Relative), Json, cancellationToken);
        }
        catch (Exception e) when (e is HttpRequestException or JsonException || (e is TaskCanceledException && !cancellationToken.IsCancellationRequested))
        {
            return null; // not listening yet, or a request timed out
        }
    }

    /// <summary>
    /// Polls the host every <paramref name="interval"/> (100 ms by default) until every worker runs; returns that status.
    /// Throws <see cref="HostNotReadyException"/> when <paramref name="exitReason"/> returns a reason (the process is gone),
    /// when a worker failed to start (its error in the message), or after <paramref name="timeout"/>.
    /// </summary>
    public static async Task<HostStatus> WaitAsync(
        HttpClient http,
        TimeSpan timeout,
        Func<string?> exitReason,
        TimeSpan? interval = null,
        TimeProvider? time = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(exitReason);
        time ??= TimeProvider.System;
        long started = time.GetTimestamp();
        HostStatus? last = null;
        while (time.GetElapsedTime(started) < timeout)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (exitReason() is { } exited)
            {
                throw new HostNotReadyException(HostNotReadyReason.Exited, $"The host {exited} before it was ready.");
            }

            last = await TryGetStatusAsync(http, cancellationToken) ?? last;
            if (last?.Workers.FirstOrDefault(w => w.IsFailed) is { } failed)
            {
                throw new HostNotReadyException(
                    HostNotReadyReason.WorkerFailed,
                    $"The host's {failed.Language} worker failed to start (after {time.GetElapsedTime(started).TotalSeconds:0.0} s): {failed.Error}");
            }

            if (last is { State: "Error" })
            {
                throw new HostNotReadyException(HostNotReadyReason.WorkerFailed, $"The host is in Error (after {time.GetElapsedTime(started).TotalSeconds:0.0} s): {last.Error}");
            }

            if (last is { State: "Running", Workers.Count: > 0 } && last.Workers.All(w => w.IsRunning))
            {
                return last;
            }

            await Task.Delay(interval ?? TimeSpan.FromMilliseconds(100), time, cancellationToken);
        }

        string seen = last is null ? "the host never answered /admin/host/status" : "workers " + string.Join(", ", last.Workers.Select(w => $"{w.Language} {w.State}"));
        throw new HostNotReadyException(HostNotReadyReason.TimedOut, $"The host was not ready within {timeout.TotalSeconds:0} s ({seen}).");
    }
}

/// <summary>Why <see cref="HostReadiness.WaitAsync"/> gave up.</summary>
public enum HostNotReadyReason
{
    /// <summary>The host process exited.</summary>
    Exited,

    /// <summary>The host reports a worker it gave up starting.</summary>
    WorkerFailed,

    /// <summary>The host was not ready within the timeout.</summary>
    TimedOut,
}

/// <summary>A host that did not become ready: why, in <see cref="Reason"/> and the message.</summary>
public sealed class HostNotReadyException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="HostNotReadyException"/> class.</summary>
    public HostNotReadyException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="HostNotReadyException"/> class.</summary>
    public HostNotReadyException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="HostNotReadyException"/> class.</summary>
    public HostNotReadyException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="HostNotReadyException"/> class.</summary>
    public HostNotReadyException(HostNotReadyReason reason, string message)
        : base(message) => Reason = reason;

    /// <summary>Gets why the host is not ready.</summary>
    public HostNotReadyReason Reason { get; } = HostNotReadyReason.TimedOut;
}
