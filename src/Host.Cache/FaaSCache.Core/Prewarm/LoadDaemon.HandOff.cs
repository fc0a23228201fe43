using Microsoft.Extensions.Logging;

namespace FaaSCache.Prewarm;

/// <summary>
/// The snapshot before a cache-size scale-out: the same snapshot as at unload, written while the instance lives so the
/// instance the vote brings finds it at load. Statistics are cumulative, so each snapshot supersedes this instance's
/// previous one (deleted), and the Load Daemon never counts one lifetime's accesses twice.
/// </summary>
public sealed partial class LoadDaemon : IScaleOutHandOff
{
    /// <summary>The least time between two hand-off snapshots of one instance (the controller polls every few seconds).</summary>
    public static readonly TimeSpan HandOffInterval = TimeSpan.FromSeconds(30);

    private long _lastHandOff;

    /// <inheritdoc />
    public async Task<string?> BeforeScaleOutAsync(string reason, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            if (_lastHandOff != 0 && _time.GetElapsedTime(_lastHandOff) < HandOffInterval)
            {
                return null;
            }

            _lastHandOff = _time.GetTimestamp();
        }

        using var bounded = new CancellationTokenSource(SnapshotTimeout, _time);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(bounded.Token, cancellationToken);
        try
        {
            string? key = await WriteSnapshotAsync(SnapshotOccasion.ScaleOut, linked.Token).ConfigureAwait(false);
            if (key is not null)
            {
                LogHandOff(key, reason);
            }

            return key;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            LogHandOffFailed($"not written within {SnapshotTimeout.TotalSeconds:0} s");
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or Azure.RequestFailedException or ObjectDisposedException)
        {
            LogHandOffFailed(e.Message);
        }

        return null;
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
        catch (Exception e) when (e is IOException or InvalidOperationException or Azure.RequestFailedException)
        {
            LogSupersededNotDeleted(previous, e.Message);
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Pre-warm snapshot {Key} written before a cache-size scale-out, for the instance it brings ({Reason})")]
    private partial void LogHandOff(string key, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm snapshot before a scale-out failed: {Reason}; the new instance starts with an empty part of the ring")]
    private partial void LogHandOffFailed(string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm could not delete its superseded snapshot {Key}: {Reason}; the Load Daemon may count its accesses twice")]
    private partial void LogSupersededNotDeleted(string key, string reason);
}

/// <summary>When a snapshot is written.</summary>
public enum SnapshotOccasion
{
    /// <summary>At unload (scale-in, scale to zero, shutdown).</summary>
    Unload,

    /// <summary>Before a cache-size scale-out, for the instance it brings.</summary>
    ScaleOut,
}
