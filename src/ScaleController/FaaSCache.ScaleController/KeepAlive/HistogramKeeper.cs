namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>
/// Feeds the app's hybrid histogram and keeps it: at start loads its state from the <see cref="HistogramStateStore"/>
/// (before the first decision), records each idle time the front door ends, and writes the state back
/// <see cref="ScaleControllerOptions.HistogramSaveDelay"/> after a change (changes in between go together) and at stop.
/// </summary>
public sealed class HistogramKeeper(
    HybridHistogramPolicy histogram,
    HistogramStateStore store,
    FrontDoorTraffic traffic,
    ScaleControllerOptions options,
    TimeProvider time,
    ILogger<HistogramKeeper> logger) : BackgroundService
{
    private readonly SemaphoreSlim _dirty = new(0, 1);
    private readonly Lock _gate = new();
    private int _unsaved;
    private KeepAliveStateInfo _info = new(HistogramStateStore.ContainerName + "/" + HistogramStateStore.BlobNameFor(options.AppName), null, null, "not loaded yet");

    /// <summary>Gets where the state is kept, its last saved size and what happened to it last.</summary>
    public KeepAliveStateInfo Info
    {
        get
        {
            lock (_gate)
            {
                return _info;
            }
        }
    }

    /// <inheritdoc />
    public override async Task StartAsync(CancellationToken cancellationToken)
    {
        await LoadAsync(cancellationToken);
        traffic.IdleEnded += OnIdleEnded;
        await base.StartAsync(cancellationToken);
    }

    /// <inheritdoc />
    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        traffic.IdleEnded -= OnIdleEnded;
        await base.StopAsync(cancellationToken);
        if (Volatile.Read(ref _unsaved) > 0)
        {
            await SaveAsync(cancellationToken);
        }
    }

    /// <inheritdoc />
    public override void Dispose()
    {
        _dirty.Dispose();
        base.Dispose();
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                await _dirty.WaitAsync(stoppingToken);
                await Task.Delay(options.HistogramSaveDelay, time, stoppingToken);
                await SaveAsync(stoppingToken);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // StopAsync writes what is left.
        }
    }

    private void OnIdleEnded(object? sender, TimeSpan idle)
    {
        histogram.RecordIdleTime(options.AppName, idle);
        Interlocked.Increment(ref _unsaved);
        if (_dirty.CurrentCount == 0)
        {
            try
            {
                _dirty.Release();
            }
            catch (SemaphoreFullException)
            {
                // Another arrival signalled first: one write takes both.
            }
        }
    }

    private async Task LoadAsync(CancellationToken cancellationToken)
    {
        string note;
        try
        {
            HistogramState? state = await store.LoadAsync(options.AppName, cancellationToken);
            if (state is null)
            {
                note = "no state stored yet: the histogram starts empty";
            }
            else
            {
                int total = histogram.WithHistogram(options.AppName, h =>
                {
                    state.RestoreInto(h);
                    return h.Total;
                });
                note = $"loaded {total} idle time(s) at start";
            }
        }
        catch (FormatException e)
        {
            note = "the stored state was not used: " + e.Message;
        }
        catch (Azure.RequestFailedException e)
        {
            note = "the stored state could not be read: " + e.Message;
        }

        logger.LogInformation("Hybrid histogram of {App}: {Note}", options.AppName, note);
        lock (_gate)
        {
            _info = _info with { Note = note };
        }
    }

    private async Task SaveAsync(CancellationToken cancellationToken)
    {
        int taken = Volatile.Read(ref _unsaved);
        HistogramState state = histogram.WithHistogram(options.AppName, HistogramState.From);
        try
        {
            int bytes = await store.SaveAsync(options.AppName, state, cancellationToken);
            Interlocked.Add(ref _unsaved, -taken);
            lock (_gate)
            {
                _info = _info with { Bytes = bytes, SavedAt = time.GetUtcNow(), Note = "saved" };
            }

            logger.LogDebug("Saved the hybrid histogram of {App} ({Bytes} bytes)", options.AppName, bytes);
        }
        catch (Azure.RequestFailedException e)
        {
            logger.LogWarning("Could not save the hybrid histogram of {App}: {Error}", options.AppName, e.Message);
            lock (_gate)
            {
                _info = _info with { Note = "the last save failed: " + e.Message };
            }
        }
    }
}

/// <summary>The hybrid histogram's stored state, for the status.</summary>
/// <param name="Blob">container/blob of the state.</param>
/// <param name="Bytes">The size last written (null: not written by this controller yet).</param>
/// <param name="SavedAt">When it was last written.</param>
/// <param name="Note">What happened to it last (loaded, saved, a failure).</param>
public sealed record KeepAliveStateInfo(string Blob, int? Bytes, DateTimeOffset? SavedAt, string Note);
