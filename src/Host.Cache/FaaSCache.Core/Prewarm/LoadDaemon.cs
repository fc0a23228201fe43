namespace FaaSCache.Prewarm;

/// <summary>
/// §3.3's Load Daemon. At start it merges the app's unload snapshots over a look-back window derived from the
/// invocation frequency they show, selects the objects worth loading (<see cref="PrewarmSelector"/>) and loads the ones
/// this instance owns under the current ring, most beneficial first, into free capacity, only while no invocation
/// executes. At stop (scale-in, scale to zero, SIGTERM) it writes this instance's snapshot, within a bounded time.
/// Both are on with <c>prewarm.enabled</c>.
/// </summary>
public sealed partial class LoadDaemon : BackgroundService
{
    /// <summary>The longest the snapshot at unload may take.</summary>
    public static readonly TimeSpan SnapshotTimeout = TimeSpan.FromSeconds(5);

    /// <summary>The most snapshots read at load (the newest ones).</summary>
    public const int MaxSnapshots = 500;

    private const int MaxLoadedKeysShown = 100;

    private readonly Cachelet _cache;
    private readonly SnapshotStore _snapshots;
    private readonly IOwnerLocator _owners;
    private readonly IInvocationActivity? _invocations;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly PrewarmMetrics _metrics;
    private readonly bool _ownsMetrics;
    private readonly Lock _gate = new();
    private readonly List<string> _loadedKeys = [];
    private readonly TaskCompletionSource<LoadDaemonStatus> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private string _state;
    private int _snapshotsRead, _snapshotsSkipped, _candidates, _owned, _loaded, _alreadyCached, _noRoom, _changed, _missing, _failed;
    private long _bytesLoaded, _startedAt, _elapsedTicks, _pauses;
    private double _perHour;
    private TimeSpan _lookBack;
    private string? _lastSnapshot;
    private InvocationYield? _yield;

    /// <summary>Initializes a new instance of the <see cref="LoadDaemon"/> class.</summary>
    /// <param name="cache">The cachelet it loads into and snapshots.</param>
    /// <param name="snapshots">The app's snapshot blobs.</param>
    /// <param name="owners">The ring: only keys this instance owns are loaded.</param>
    /// <param name="invocations">Invocations in flight (null: nothing to yield to).</param>
    /// <param name="time">Clock.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="metrics">Metrics (a private meter when null).</param>
    public LoadDaemon(Cachelet cache, SnapshotStore snapshots, IOwnerLocator owners, IInvocationActivity? invocations = null, TimeProvider? time = null, ILogger<LoadDaemon>? logger = null, PrewarmMetrics? metrics = null)
    {
        ArgumentNullException.ThrowIfNull(cache);
        ArgumentNullException.ThrowIfNull(snapshots);
        ArgumentNullException.ThrowIfNull(owners);
        _cache = cache;
        _snapshots = snapshots;
        _owners = owners;
        _owners.RingChanged += OnRingChanged;
        _invocations = invocations;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _ownsMetrics = metrics is null;
        _metrics = metrics ?? new PrewarmMetrics(cache.InstanceId);
        _state = Options.Enabled ? "waiting" : "off";
    }

    /// <summary>Raised when the daemon starts waiting because an invocation executes.</summary>
    public event EventHandler? Paused;

    /// <summary>Gets the pre-warm settings in force.</summary>
    public PrewarmOptions Options => _cache.Options.Prewarm;

    /// <summary>
    /// Gets a value indicating whether a selected object whose storage version changed since its snapshot is skipped:
    /// only under a preset whose reads check storage's version (<c>strong</c>). There an object rewritten between
    /// lifetimes is likely rewritten again before it is read, and a read revalidates and downloads it anyway, so the
    /// load would be spent twice. Under every other preset a loaded copy is read as it is (local reads) or is the
    /// owner's copy, which the next write replaces through the owner, so the current version is loaded: the snapshot's
    /// version is the one storage no longer holds and never worth loading.
    /// </summary>
    public bool SkipsChangedVersions => _cache.Options.Policy.ReadTarget == ReadTarget.StorageVersion;

    /// <summary>Gets a task that completes with the status when the load at start is over (done, off or failed).</summary>
    public Task<LoadDaemonStatus> Completion => _completion.Task;

    /// <summary>The state for the admin status.</summary>
    public LoadDaemonStatus Status()
    {
        lock (_gate)
        {
            TimeSpan elapsed = _elapsedTicks > 0 ? TimeSpan.FromTicks(_elapsedTicks) : _startedAt > 0 ? _time.GetElapsedTime(_startedAt) : TimeSpan.Zero;
            return new LoadDaemonStatus(
                Options.Enabled, _state, Options.HitRateThreshold, _snapshotsRead, _snapshotsSkipped, _perHour, _lookBack, _candidates, _owned,
                _loaded, _bytesLoaded, _alreadyCached, _noRoom, _changed, _missing, _failed, _pauses, elapsed, [.. _loadedKeys], _lastSnapshot);
        }
    }

    /// <summary>Writes this instance's snapshot now (at unload); null when pre-warm is off or nothing was accessed.</summary>
    public Task<string?> WriteSnapshotAsync(CancellationToken cancellationToken = default) => WriteSnapshotAsync(SnapshotOccasion.Unload, cancellationToken);

    /// <summary>Writes this instance's snapshot now, superseding its previous one; null when pre-warm is off or nothing was accessed.</summary>
    /// <param name="occasion">Why (logged).</param>
    /// <param name="cancellationToken">Stops the write.</param>
    public async Task<string?> WriteSnapshotAsync(SnapshotOccasion occasion, CancellationToken cancellationToken = default)
    {
        if (!Options.Enabled)
        {
            return null;
        }

        UnloadSnapshot snapshot = UnloadSnapshots.FromStatistics(_snapshots.AppName, _cache.InstanceId, _time.GetUtcNow(), _cache.GetAllStatistics());
        if (snapshot.Entries.Count == 0)
        {
            LogNoSnapshot(OccasionName(occasion));
            return null;
        }

        long started = _time.GetTimestamp();
        string key = await _snapshots.WriteAsync(snapshot, cancellationToken).ConfigureAwait(false);
        string? previous;
        lock (_gate)
        {
            previous = _lastSnapshot;
            _lastSnapshot = key;
        }

        _metrics.Snapshots("written", 1);
        LogSnapshotWritten(OccasionName(occasion), key, snapshot.Entries.Count, snapshot.Entries.Sum(e => e.SizeBytes), _time.GetElapsedTime(started).TotalMilliseconds);
        await DeleteSupersededAsync(previous == key ? null : previous, cancellationToken).ConfigureAwait(false);
        return key;
    }

    /// <inheritdoc />
    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        // The load stops first (its objects are in the statistics only if read), then the snapshot, bounded in time.
        await base.StopAsync(cancellationToken).ConfigureAwait(false);
        using var bounded = new CancellationTokenSource(SnapshotTimeout, _time);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(bounded.Token, cancellationToken);
        try
        {
            await WriteSnapshotAsync(linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            LogSnapshotFailed($"not written within {SnapshotTimeout.TotalSeconds:0} s");
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or Azure.RequestFailedException or Storage.StorageUnavailableException or ObjectDisposedException)
        {
            LogSnapshotFailed(e.Message);
        }
    }

    /// <inheritdoc />
    public override void Dispose()
    {
        _owners.RingChanged -= OnRingChanged;
        _yield?.Dispose();
        if (_ownsMetrics)
        {
            _metrics.Dispose();
        }

        base.Dispose();
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        // Off the host's start-up path: the host listens (and takes invocations) while the daemon loads.
        await Task.Yield();
        try
        {
            // The ring is known once the instance joined the membership (after the server listens): owners before that
            // would be this instance alone, and it would load every key.
            await WaitForHostStartedAsync(stoppingToken).ConfigureAwait(false);
            await RunAsync(stoppingToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            SetState("stopped");
            _completion.TrySetResult(Status());
        }
    }

    private void SetState(string state)
    {
        lock (_gate)
        {
            _state = state;
        }
    }

    private static string OccasionName(SnapshotOccasion occasion) => occasion == SnapshotOccasion.RingGrew ? "for the ring's newcomers" : "at unload";

    [LoggerMessage(Level = LogLevel.Information, Message = "Pre-warm snapshot written {Occasion}: {Key}, {Objects} object(s), {Bytes} cached bytes, {Ms:0} ms")]
    private partial void LogSnapshotWritten(string occasion, string key, int objects, long bytes, double ms);

    [LoggerMessage(Level = LogLevel.Information, Message = "Pre-warm: nothing was accessed in this lifetime; no snapshot written {Occasion}")]
    private partial void LogNoSnapshot(string occasion);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm snapshot at unload failed: {Reason}")]
    private partial void LogSnapshotFailed(string reason);
}
