namespace FaaSCache.Memory;

/// <summary>
/// §3.4's Memory Daemon: every sample it measures function memory (the host's and every worker's own resident bytes,
/// from /proc) plus cached bytes against the app's memory limit, and when they come within <c>memoryHeadroomPercent</c>
/// of it, evicts in the cachelet's policy order until below, so a function's own allocation never fails for the cache.
/// </summary>
public sealed partial class MemoryDaemon : BackgroundService
{
    /// <summary>The default time between samples.</summary>
    public static readonly TimeSpan DefaultSampleInterval = TimeSpan.FromMilliseconds(250);

    private readonly Cachelet _cache;
    private readonly ProcMemoryReader _reader;
    private readonly IWorkerProcesses? _workers;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Lock _gate = new();
    private readonly int _headroom;
    private readonly long _limit;
    private readonly MemoryLimitSource _source;
    private PeriodicTimer? _timer;
    private MemorySample _last;
    private long _samples, _rounds, _objects, _bytes, _keptReleased;
    private DateTimeOffset? _lastSampleAt;
    private bool _above;
    private MemoryCrossing? _crossing;

    /// <summary>Initializes a new instance of the <see cref="MemoryDaemon"/> class and resolves the limit once.</summary>
    /// <param name="cache">The cachelet it evicts from.</param>
    /// <param name="reader">The /proc reader.</param>
    /// <param name="workers">The worker processes (null: the host has none of its own, as in the WebJobs face).</param>
    /// <param name="time">Clock.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="sampleInterval">Time between samples (default 250 ms).</param>
    public MemoryDaemon(Cachelet cache, ProcMemoryReader reader, IWorkerProcesses? workers = null, TimeProvider? time = null, ILogger<MemoryDaemon>? logger = null, TimeSpan? sampleInterval = null)
    {
        ArgumentNullException.ThrowIfNull(cache);
        ArgumentNullException.ThrowIfNull(reader);
        _cache = cache;
        _reader = reader;
        _workers = workers;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        SampleInterval = sampleInterval ?? DefaultSampleInterval;
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(SampleInterval, TimeSpan.Zero, nameof(sampleInterval));
        _headroom = cache.Options.MemoryHeadroomPercent;
        (_limit, _source) = reader.ResolveLimit(cache.Options.MemoryLimitBytes);
    }

    /// <summary>Raised after each sample the daemon acts on, with what it evicted.</summary>
    public event EventHandler<MemoryEvictionResult>? Sampled;

    /// <summary>Gets the time between samples.</summary>
    public TimeSpan SampleInterval { get; }

    /// <summary>Gets the limit in force.</summary>
    public long LimitBytes => _limit;

    /// <summary>Gets the usage above which the daemon evicts.</summary>
    public long ThresholdBytes => MemoryPressure.Threshold(_limit, _headroom);

    /// <summary>The state for the admin status.</summary>
    public MemoryDaemonStatus Status()
    {
        lock (_gate)
        {
            return new MemoryDaemonStatus(
                _limit, SourceName(_source), _headroom, ThresholdBytes, _last.ManagedHeapBytes, _last.HostPrivateBytes,
                _last.WorkerPrivateBytes, _last.CachedBytes, _samples, _rounds, _objects, _bytes, _keptReleased, _crossing);
        }
    }

    /// <summary>Measures the host, the workers and the cache now.</summary>
    public MemorySample Measure()
    {
        long workers = 0;
        foreach (int pid in _workers?.ProcessIds ?? [])
        {
            workers += _reader.ReadProcess(pid)?.PrivateBytes ?? 0;
        }

        long host = _reader.ReadProcess(Environment.ProcessId)?.PrivateBytes ?? Environment.WorkingSet;
        // Files kept for reuse are the cache's memory too (tmpfs pages charged to the app), and the first to go.
        return new MemorySample(_limit, _source, GC.GetTotalMemory(forceFullCollection: false), host, workers, _cache.CacheMemoryBytes);
    }

    /// <summary>One sample: measure, and evict down below the threshold when usage is within the headroom.</summary>
    public MemoryEvictionResult SampleOnce() => Act(Measure());

    /// <summary>Acts on one measurement (tests pass a made-up one).</summary>
    public MemoryEvictionResult Act(MemorySample sample)
    {
        DateTimeOffset sampledAt = _time.GetUtcNow();
        long toFree = MemoryPressure.BytesToFree(sample, _headroom);
        MemoryEvictionResult result = toFree > 0 ? _cache.EvictForMemory(toFree) : default;
        lock (_gate)
        {
            _last = sample;
            _samples++;
            if (result.Objects > 0 || result.KeptBytesReleased > 0)
            {
                _rounds++;
                _objects += result.Objects;
                _bytes += result.Bytes;
                _keptReleased += result.KeptBytesReleased;
            }

            if (toFree > 0)
            {
                // A crossing starts at the first sample above the threshold after one below, and lasts while it stays above.
                MemoryCrossing current = _above && _crossing is not null ? _crossing : new MemoryCrossing(_lastSampleAt, sampledAt, sampledAt, 0, 0, 0);
                _crossing = current with
                {
                    RoomMadeAt = _time.GetUtcNow(),
                    Objects = current.Objects + result.Objects,
                    Bytes = current.Bytes + result.Bytes,
                    KeptBytesReleased = current.KeptBytesReleased + result.KeptBytesReleased,
                };
            }

            _above = toFree > 0;
            _lastSampleAt = sampledAt;
        }

        if (toFree > 0)
        {
            LogEvicted(result.Objects, result.Bytes, result.KeptBytesReleased, toFree, sample.FunctionBytes, sample.HostPrivateBytes, sample.WorkerPrivateBytes, sample.CachedBytes, sample.LimitBytes, _headroom, result.Skipped);
        }

        Sampled?.Invoke(this, result);
        return result;
    }

    /// <inheritdoc />
    public override Task StartAsync(CancellationToken cancellationToken)
    {
        // The timer starts with the host, not whenever ExecuteAsync gets a thread: samples are due from start-up on.
        _timer = new PeriodicTimer(SampleInterval, _time);
        LogStarted(_limit, SourceName(_source), _headroom, ThresholdBytes, SampleInterval.TotalMilliseconds);
        return base.StartAsync(cancellationToken);
    }

    /// <inheritdoc />
    public override void Dispose()
    {
        _timer?.Dispose();
        base.Dispose();
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        PeriodicTimer timer = _timer ?? throw new InvalidOperationException("StartAsync creates the timer.");
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                try
                {
                    SampleOnce();
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidDataException or ObjectDisposedException)
                {
                    LogSampleFailed(e.Message);
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // Host shutdown.
        }
    }

    private static string SourceName(MemoryLimitSource source) => source switch
    {
        MemoryLimitSource.Configured => "memoryLimitBytes",
        MemoryLimitSource.Cgroup => "cgroup",
        _ => "machine",
    };

    [LoggerMessage(Level = LogLevel.Information, Message = "Memory Daemon: limit {Limit} bytes ({Source}), headroom {Headroom}%, evicts above {Threshold} bytes, sampling every {IntervalMs} ms")]
    private partial void LogStarted(long limit, string source, int headroom, long threshold, double intervalMs);

    [LoggerMessage(Level = LogLevel.Information, Message = "Memory Daemon evicted {Objects} object(s), {Bytes} bytes, and deleted {Kept} bytes of files kept for reuse (wanted {Wanted}): function memory {Function} bytes (host {Host}, workers {Workers}) + cache memory {Cached} bytes came within {Headroom}% of the {Limit}-byte limit; {Skipped} object(s) in use or not yet persisted were kept")]
    private partial void LogEvicted(int objects, long bytes, long kept, long wanted, long function, long host, long workers, long cached, long limit, int headroom, int skipped);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Memory Daemon could not sample: {Error}")]
    private partial void LogSampleFailed(string error);
}
