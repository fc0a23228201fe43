namespace FaaSCache.Bandwidth;

/// <summary>
/// §4, bandwidth scaling as the cachelet uses it: the measured profile, the planner, the controller to ask for more
/// instances, and the record of recent scaled loads that the bandwidth voter reads.
/// </summary>
public sealed class BandwidthScaler
{
    /// <summary>The most instances one load plans for when nothing else bounds it (the controller caps it with its maximum).</summary>
    public const int DEFAULT_MAX_INSTANCES = 16;

    private const int KeptLoads = 64;
    private readonly AsyncLocal<int?> _forced = new();
    private readonly Lock _gate = new();
    private readonly Queue<ScaledLoadRecord> _recent = new();
    private readonly List<RunningLoad> _running = [];
    private readonly TimeProvider _time;

    /// <summary>Initializes a new instance of the <see cref="BandwidthScaler"/> class.</summary>
    /// <param name="profiler">The measured profile.</param>
    /// <param name="controller">Where urgent votes go; null when no scale controller runs (only running instances help).</param>
    /// <param name="maxInstances">The most instances one load plans for.</param>
    /// <param name="time">Clock.</param>
    public BandwidthScaler(TransferProfiler profiler, IScaleOutRequester? controller = null, int maxInstances = DEFAULT_MAX_INSTANCES, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(profiler);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxInstances, 1);
        Profiler = profiler;
        Controller = controller;
        MaxInstances = maxInstances;
        _time = time ?? TimeProvider.System;
    }

    /// <summary>Gets the measured profile.</summary>
    public TransferProfiler Profiler { get; }

    /// <summary>Gets the scale controller client, when one is configured.</summary>
    public IScaleOutRequester? Controller { get; }

    /// <summary>Gets the most instances one load plans for.</summary>
    public int MaxInstances { get; }

    /// <summary>Gets the N forced for the current flow (<see cref="Force"/>), if any.</summary>
    public int? Forced => _forced.Value;

    /// <summary>Plans a download of <paramref name="sizeBytes"/> with <paramref name="running"/> instances up.</summary>
    public BandwidthPlan Plan(long sizeBytes, int running)
    {
        if (_forced.Value is { } n)
        {
            return new BandwidthPlan(n, 0, [], $"N={n} forced by the caller");
        }

        return BandwidthPlanner.Plan(sizeBytes, Math.Max(1, running), MaxInstances, Profiler.Current);
    }

    /// <summary>
    /// Makes reads in this flow (until disposed) use exactly <paramref name="instances"/> instances for a miss, whatever
    /// the planner would choose: how the benchmarks measure every fixed N.
    /// </summary>
    public IDisposable Force(int instances)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(instances, 1);
        int? previous = _forced.Value;
        _forced.Value = instances;
        return new Restore(this, previous);
    }

    /// <summary>
    /// Marks a scaled load planned over <paramref name="planned"/> instances as running until the
    /// result is disposed: the bandwidth voter holds its instances while it runs, not only after it finished (a helper
    /// started for it must not be scaled in halfway, its range taken back, and started again once the load is recorded).
    /// </summary>
    public IDisposable Running(int planned)
    {
        var load = new RunningLoad(this, planned);
        lock (_gate)
        {
            _running.Add(load);
        }

        return load;
    }

    /// <summary>The N planned by each scaled load running now.</summary>
    public IReadOnlyList<int> RunningPlans()
    {
        lock (_gate)
        {
            return [.. _running.Select(r => r.Planned)];
        }
    }

    /// <summary>Records a finished scaled load.</summary>
    public void Record(ScaledLoadRecord load)
    {
        lock (_gate)
        {
            _recent.Enqueue(load);
            while (_recent.Count > KeptLoads)
            {
                _recent.Dequeue();
            }
        }
    }

    /// <summary>The scaled loads that finished within <paramref name="window"/>, oldest first.</summary>
    public IReadOnlyList<ScaledLoadRecord> Recent(TimeSpan window)
    {
        DateTimeOffset since = _time.GetUtcNow() - window;
        lock (_gate)
        {
            return [.. _recent.Where(r => r.At >= since)];
        }
    }

    private sealed class RunningLoad(BandwidthScaler owner, int planned) : IDisposable
    {
        public int Planned { get; } = planned;

        public void Dispose()
        {
            lock (owner._gate)
            {
                owner._running.Remove(this);
            }
        }
    }

    private sealed class Restore(BandwidthScaler owner, int? previous) : IDisposable
    {
        public void Dispose() => owner._forced.Value = previous;
    }
}
