namespace FaaSCache.Prewarm;

/// <summary>
/// The hand-off when the ring grows (any scale-out: compute, cache size, bandwidth). Each running member writes its
/// snapshot when it sees a new member, and a newcomer that finds live members waits (bounded by
/// <see cref="HandOffWait"/>) for their snapshots before it selects: so the instance a cache-size vote brings pre-warms
/// the keys it now owns instead of starting with an empty part of the ring. Statistics are cumulative, so each
/// snapshot of a lifetime supersedes the previous one (deleted): no access is counted twice.
/// </summary>
public sealed partial class LoadDaemon
{

    private static readonly TimeSpan HandOffPoll = TimeSpan.FromMilliseconds(200);

    // A member's clock may run a little behind this one's (other machines): its hand-off is still this join's.
    private static readonly TimeSpan HandOffSlack = TimeSpan.FromSeconds(1);

    private int _handOffRunning;
    private DateTimeOffset _startedUtc;

    /// <summary>
    /// Gets how long a newcomer (one that finds other members at load) waits for their hand-off snapshots before it
    /// selects; zero: it does not wait (the constructor's default; the hosts use <see cref="HandOffWaitFor"/>).
    /// </summary>
    public TimeSpan HandOffWait { get; init; }

    /// <summary>
    /// Gets the host's "started" signal (<c>IHostApplicationLifetime.ApplicationStarted</c>, after the membership join);
    /// the hosted daemon selects only after it. None (the default): it starts at once.
    /// </summary>
    public CancellationToken HostStarted { get; init; }

    /// <summary>The newcomer's wait in the hosts: members read the membership every heartbeat, so two and a second.</summary>
    /// <param name="heartbeatInterval">The app's <c>membership.heartbeatInterval</c>.</param>
    public static TimeSpan HandOffWaitFor(TimeSpan heartbeatInterval) => (2 * heartbeatInterval) + TimeSpan.FromSeconds(1);

    /// <summary>Writes this instance's snapshot for members that just joined; null when none was written. Never throws.</summary>
    /// <param name="reason">Why (logged).</param>
    /// <param name="cancellationToken">Stops the write.</param>
    public async Task<string?> WriteHandOffSnapshotAsync(string reason, CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _handOffRunning, 1) == 1)
        {
            return null;
        }

        using var bounded = new CancellationTokenSource(SnapshotTimeout, _time);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(bounded.Token, cancellationToken);
        try
        {
            string? key = await WriteSnapshotAsync(SnapshotOccasion.RingGrew, linked.Token).ConfigureAwait(false);
            if (key is not null)
            {
                LogHandOff(key, reason);
            }

            return key;
        }
        catch (OperationCanceledException)
        {
            LogHandOffFailed($"not written within {SnapshotTimeout.TotalSeconds:0} s");
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or Azure.RequestFailedException or Storage.StorageUnavailableException or ObjectDisposedException)
        {
            LogHandOffFailed(e.Message);
        }
        finally
        {
            Volatile.Write(ref _handOffRunning, 0);
        }

        return null;
    }

    private void OnRingChanged(object? sender, RingChangedEventArgs e)
    {
        string[] joined = [.. e.Added.Where(m => !string.Equals(m, _owners.SelfId, StringComparison.Ordinal))];
        if (joined.Length > 0 && Options.Enabled)
        {
            _ = WriteHandOffSnapshotAsync($"{string.Join(", ", joined)} joined the ring");
        }
    }

    private async Task WaitForHostStartedAsync(CancellationToken cancellationToken)
    {
        if (!HostStarted.CanBeCanceled || HostStarted.IsCancellationRequested)
        {
            return;
        }

        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using CancellationTokenRegistration onStarted = HostStarted.Register(() => started.TrySetResult());
        await started.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    // A newcomer waits until every other member has written a snapshot since it started, or the wait is over.
    private async Task WaitForHandOffsAsync(CancellationToken cancellationToken)
    {
        string[] others = [.. _owners.Others()];
        if (HandOffWait <= TimeSpan.Zero || others.Length == 0)
        {
            return;
        }

        long started = _time.GetTimestamp();
        HashSet<string> missing = [.. others];
        while (true)
        {
            SnapshotListing recent = await _snapshots.ReadAsync(_startedUtc - HandOffSlack, MaxSnapshots, cancellationToken).ConfigureAwait(false);
            missing.ExceptWith(recent.Snapshots.Select(s => s.InstanceId));
            if (missing.Count == 0 || _time.GetElapsedTime(started) >= HandOffWait)
            {
                LogHandOffsReceived(others.Length - missing.Count, others.Length, _time.GetElapsedTime(started).TotalMilliseconds, missing.Count == 0 ? "none" : string.Join(", ", missing));
                return;
            }

            await Task.Delay(HandOffPoll, _time, cancellationToken).ConfigureAwait(false);
        }
    }

    // The superseded snapshot of this lifetime goes: its counts are in the new one too.
    private async Task DeleteSupersededAsync(string? previous, CancellationToken cancellationToken)
    {
        if (previous is null)
        {
            return;
        }

        try
        {
            await _snapshots.DeleteAsync(previous, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or Azure.RequestFailedException or Storage.StorageUnavailableException)
        {
            LogSupersededNotDeleted(previous, e.Message);
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Pre-warm snapshot {Key} written for the ring's newcomers ({Reason})")]
    private partial void LogHandOff(string key, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm snapshot for the ring's newcomers failed: {Reason}; they start with an empty part of the ring")]
    private partial void LogHandOffFailed(string reason);

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon: {Received} of {Members} live member(s) handed off their snapshots in {Ms:0} ms (missing: {Missing})")]
    private partial void LogHandOffsReceived(int received, int members, double ms, string missing);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm could not delete its superseded snapshot {Key}: {Reason}; the Load Daemon may count its accesses twice")]
    private partial void LogSupersededNotDeleted(string key, string reason);
}
