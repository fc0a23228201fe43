using FaaSCache.Prewarm;

namespace FaaSCache.Scaling;

/// <summary>The compute voter's view of the invocations over a recent window.</summary>
/// <param name="Window">The span the rates and latencies cover (shorter right after start-up).</param>
/// <param name="Completed">Invocations that finished in the window.</param>
/// <param name="Failed">Of those, the ones that failed.</param>
/// <param name="InFlight">Invocations executing now.</param>
/// <param name="MeanLatency">Mean duration of the finished ones (zero when none).</param>
/// <param name="P99Latency">99th percentile duration (zero when none).</param>
public readonly record struct InvocationSample(TimeSpan Window, long Completed, long Failed, int InFlight, TimeSpan MeanLatency, TimeSpan P99Latency)
{
    /// <summary>Gets the completion rate per second.</summary>
    public double PerSecond => Window > TimeSpan.Zero ? Completed / Window.TotalSeconds : 0;

    /// <summary>Gets the concurrency the instance carries: the larger of what runs now and rate x latency (Little's law).</summary>
    public double Concurrency => Math.Max(InFlight, PerSecond * MeanLatency.TotalSeconds);
}

/// <summary>
/// Counts this instance's invocations for the compute voter (§4: request rate, in-flight invocations, latency). The
/// FaaSCache host records every invocation it runs; the WebJobs face records them through an invocation filter.
/// Samples cover a sliding window, so any number of readers (the controller's polls, the real host's scale sampling,
/// an operator's POST) see the same numbers. Thread-safe; memory is bounded. It is also the Load Daemon's signal
/// that invocations run (§3.3: pre-warm yields to them).
/// </summary>
public sealed class InvocationMeter : IInvocationActivity
{
    /// <summary>The default window (the WebJobs SDK samples scale metrics every 10 s).</summary>
    public static readonly TimeSpan DefaultWindow = TimeSpan.FromSeconds(10);

    private const int MaxKept = 100_000;
    private readonly Lock _gate = new();
    private readonly Queue<(long At, long Ticks, bool Failed)> _done = new();
    private readonly TimeProvider _time;
    private readonly long _started;
    private int _inFlight;

    /// <summary>Initializes a new instance of the <see cref="InvocationMeter"/> class.</summary>
    public InvocationMeter(TimeProvider? time = null, TimeSpan? window = null)
    {
        _time = time ?? TimeProvider.System;
        Window = window ?? DefaultWindow;
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(Window, TimeSpan.Zero);
        _started = _time.GetTimestamp();
    }

    /// <summary>Gets the sliding window.</summary>
    public TimeSpan Window { get; }

    /// <summary>Gets the invocations executing now.</summary>
    public int InFlight => Volatile.Read(ref _inFlight);

    /// <inheritdoc />
    public event EventHandler? InFlightChanged;

    /// <summary>Records the start of an invocation; dispose the result when it ends (<see cref="Invocation.Fail"/> first if it failed).</summary>
    public Invocation Start()
    {
        Interlocked.Increment(ref _inFlight);
        InFlightChanged?.Invoke(this, EventArgs.Empty);
        return new Invocation(this, _time.GetTimestamp());
    }

    /// <summary>Reads the window.</summary>
    public InvocationSample Sample()
    {
        long now = _time.GetTimestamp();
        TimeSpan window = Min(Window, _time.GetElapsedTime(_started, now));
        lock (_gate)
        {
            PruneLocked(now);
            if (_done.Count == 0)
            {
                return new InvocationSample(window, 0, 0, InFlight, TimeSpan.Zero, TimeSpan.Zero);
            }

            long[] ticks = [.. _done.Select(d => d.Ticks)];
            Array.Sort(ticks);
            long failed = _done.Count(d => d.Failed);
            double mean = ticks.Average();
            long p99 = ticks[Math.Min(ticks.Length - 1, (int)Math.Ceiling(ticks.Length * 0.99) - 1)];
            return new InvocationSample(window, ticks.Length, failed, InFlight, TimeSpan.FromTicks((long)mean), TimeSpan.FromTicks(p99));
        }
    }

    private void End(long started, bool failed)
    {
        long now = _time.GetTimestamp();
        long ticks = _time.GetElapsedTime(started, now).Ticks;
        Interlocked.Decrement(ref _inFlight);
        InFlightChanged?.Invoke(this, EventArgs.Empty);
        lock (_gate)
        {
            _done.Enqueue((now, ticks, failed));
            PruneLocked(now);
            while (_done.Count > MaxKept)
            {
                _done.Dequeue();
            }
        }
    }

    private void PruneLocked(long now)
    {
        while (_done.Count > 0 && _time.GetElapsedTime(_done.Peek().At, now) > Window)
        {
            _done.Dequeue();
        }
    }

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    /// <summary>One invocation in progress.</summary>
    public sealed class Invocation : IDisposable
    {
        private readonly InvocationMeter _meter;
        private readonly long _started;
        private bool _failed;
        private int _ended;

        internal Invocation(InvocationMeter meter, long started)
        {
            _meter = meter;
            _started = started;
        }

        /// <summary>Marks the invocation as failed.</summary>
        public void Fail() => _failed = true;

        /// <inheritdoc />
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _ended, 1) == 0)
            {
                _meter.End(_started, _failed);
            }
        }
    }
}
