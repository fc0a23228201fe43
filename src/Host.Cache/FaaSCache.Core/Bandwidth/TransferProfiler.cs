namespace FaaSCache.Bandwidth;

/// <summary>
/// Keeps <see cref="TransferProfile"/> current from what this instance actually moves (§4: "periodically profiles
/// T_Load, BW_BS and BW_Inst"): every storage download and every peer transfer of at least
/// <see cref="MinBandwidthSampleBytes"/> is a bandwidth sample, every one a latency sample; the scale controller reports
/// T_Load, which it measures. Recent samples weigh more (an exponentially weighted mean) and a bandwidth sample weighs by
/// how long it transferred (<see cref="RateTimeConstant"/>), so the profile follows changes in the network without
/// jumping at one short slow transfer. Scaled loads that take well over their prediction
/// (<see cref="ShortfallTolerance"/>) measure what this instance's inbound link carries when storage and peer bytes arrive
/// together (<see cref="TransferProfile.InboundBytesPerSecond"/>), and never on one outlier's word: a split slower than
/// one instance alone would have been (it did not pay at all: a link shared by storage and peers) sets the limit at once,
/// so the split is not repeated; a split that paid but ran slow (a first use of a connection, a busy moment on two cores)
/// is held as a suspicion that a second such load must confirm, and that a load within its prediction clears. Any scaled
/// load that carries more than the limit disproves it at once. A limit is forgotten
/// <see cref="InboundLifetime"/> after the load that set it, so the planner tries splitting again when the network may
/// have changed. A split that carries no more than a limit confirms it: the planner then stops testing it with one
/// instance more (a test that did not pay is not repeated) until it is forgotten. Thread-safe.
/// </summary>
public sealed class TransferProfiler
{
    /// <summary>Transfers smaller than this say more about latency than bandwidth and are not bandwidth samples.</summary>
    public const long MinBandwidthSampleBytes = 1L << 20;

    /// <summary>The weight of a new latency sample, and of a new BW_Inst sample, in its running mean.</summary>
    public const double SampleWeight = 0.3;

    /// <summary>
    /// The time constant of BW_BS's mean: a storage sample weighs <c>1 - exp(-transfer / RateTimeConstant)</c>, so the
    /// rate is the mean over the recent seconds of transfer rather than over the recent transfers. BW_Inst's samples are
    /// all probes of one size and weigh <see cref="SampleWeight"/> each (weighed by time, the slow probes taken while
    /// the instances start stayed in the mean for dozens of probes and held BW_Inst at a third of the link). An 8 MiB probe (about
    /// 0.1 s at 90 MB/s) that ran while storage was busy moved BW_BS as much as an 800 MB load that had just measured
    /// the link for 9 s, and the planner then judged a split against a one-instance estimate 17% slower than the one
    /// instance it had just measured (issue 36's cold rig). Now a probe weighs 2-4% and the 9 s load 84%.
    /// </summary>
    public static readonly TimeSpan RateTimeConstant = TimeSpan.FromSeconds(5);

    /// <summary>How far over its prediction a planned scaled load may run before it counts as a measured inbound limit.</summary>
    public const double ShortfallTolerance = 0.25;

    /// <summary>How long a measured inbound limit holds after the last scaled load that measured it.</summary>
    public static readonly TimeSpan InboundLifetime = TimeSpan.FromMinutes(10);

    private readonly Lock _gate = new();
    private readonly TimeProvider _time;
    private RateMean _storageRate;
    private double? _storageLatency;
    private RateMean _peerRate;
    private double? _peerLatency;
    private double? _instanceLoad;
    private DateTimeOffset _lastStorageSample;
    private DateTimeOffset _lastPeerSample;
    private double? _inboundRate;
    private DateTimeOffset _inboundAt;
    private string? _inboundSource;
    private bool _inboundConfirmed;
    private (double Rate, DateTimeOffset At, string Source)? _suspect;

    /// <summary>Initializes a new instance of the <see cref="TransferProfiler"/> class.</summary>
    public TransferProfiler(TimeProvider? time = null) => _time = time ?? TimeProvider.System;

    /// <summary>Gets when storage was last sampled (bandwidth), or default.</summary>
    public DateTimeOffset LastStorageSample
    {
        get
        {
            lock (_gate)
            {
                return _lastStorageSample;
            }
        }
    }

    /// <summary>Gets when a peer transfer was last sampled (bandwidth), or default.</summary>
    public DateTimeOffset LastPeerSample
    {
        get
        {
            lock (_gate)
            {
                return _lastPeerSample;
            }
        }
    }

    /// <summary>Gets the current profile.</summary>
    public TransferProfile Current
    {
        get
        {
            lock (_gate)
            {
                return new TransferProfile(
                    _storageRate.Value,
                    Span(_storageLatency),
                    _peerRate.Value,
                    Span(_peerLatency),
                    Span(_instanceLoad),
                    InboundLocked(_time.GetUtcNow()),
                    InboundLocked(_time.GetUtcNow()) is null ? null : _inboundSource,
                    InboundLocked(_time.GetUtcNow()) is not null && _inboundConfirmed);
            }
        }
    }

    /// <summary>Records a storage download: <paramref name="bytes"/> that took <paramref name="firstByte"/> to start and <paramref name="transfer"/> to arrive.</summary>
    public void RecordStorage(long bytes, TimeSpan firstByte, TimeSpan transfer)
    {
        lock (_gate)
        {
            Record(ref _storageRate, ref _storageLatency, ref _lastStorageSample, bytes, firstByte, transfer);
        }
    }

    /// <summary>Records a transfer from another instance.</summary>
    public void RecordPeer(long bytes, TimeSpan firstByte, TimeSpan transfer)
    {
        lock (_gate)
        {
            Record(ref _peerRate, ref _peerLatency, ref _lastPeerSample, bytes, firstByte, transfer, timeWeighted: false);
        }
    }

    /// <summary>Records T_Load as the scale controller measured it (zero or less: not measured, ignored).</summary>
    public void RecordInstanceLoad(TimeSpan load)
    {
        if (load <= TimeSpan.Zero)
        {
            return;
        }

        lock (_gate)
        {
            _instanceLoad = load.TotalSeconds;
        }
    }

    /// <summary>
    /// Records a finished scaled load of <paramref name="bytes"/> over <paramref name="instances"/> instances (the requester
    /// included) that took <paramref name="elapsed"/> from its request, against the planner's
    /// <paramref name="predictedSeconds"/> for that many instances and <paramref name="singleSeconds"/> for one (zero when
    /// N was forced: such a load can only disprove a limit, never set one).
    /// </summary>
    public void RecordScaledLoad(long bytes, int instances, TimeSpan elapsed, double predictedSeconds, double singleSeconds = 0)
    {
        if (instances < 2 || bytes < MinBandwidthSampleBytes || elapsed <= TimeSpan.Zero)
        {
            return;
        }

        double rate = bytes / elapsed.TotalSeconds;
        lock (_gate)
        {
            DateTimeOffset now = _time.GetUtcNow();
            if (_suspect is { } old && now - old.At >= InboundLifetime)
            {
                _suspect = null;
            }

            // A load that carried more than the limit disproves it: forgotten at once (a fast one also clears a suspicion, below).
            if (InboundLocked(now) is { } limit && rate > limit)
            {
                _inboundRate = null;
                _inboundSource = null;
                _inboundConfirmed = false;
            }
            else if (InboundLocked(now) is not null)
            {
                // A split made under the limit carried no more than it: the limit stands, and is not tested again until it is
                // forgotten (InboundLifetime after the loads that set it: a confirmation does not make it last longer).
                _inboundConfirmed = true;
                return;
            }

            if (predictedSeconds <= 0)
            {
                return;
            }

            // A split that saved less than half of what it was predicted to save over one instance did not pay: its link
            // carried little more than one instance's stream. Judged before the tolerance below, which is wider than the
            // whole saving of a split predicted to save little (the cold rig's 800 MB: 8.09 s predicted against 9.41 s
            // alone took 9.69 s, within a quarter of its prediction, and was split again).
            bool didNotPay = singleSeconds > 0 && elapsed.TotalSeconds > singleSeconds - ((singleSeconds - predictedSeconds) / 2);
            if (!didNotPay && elapsed.TotalSeconds <= predictedSeconds * (1 + ShortfallTolerance))
            {
                _suspect = null; // the last slow one was the outlier
                return;
            }

            string source = string.Create(System.Globalization.CultureInfo.InvariantCulture,
                $"{bytes / 1e6:0} MB over {instances} instances took {elapsed.TotalSeconds:0.00} s at {now:HH:mm:ss} (predicted {predictedSeconds:0.00} s, one alone {singleSeconds:0.00} s)");
            if (didNotPay || _suspect is not null)
            {
                // The link carried at least the faster of the two loads that measured it.
                double measured = Math.Max(rate, _suspect?.Rate ?? 0);
                _inboundSource = didNotPay ? $"{source}: {(elapsed.TotalSeconds > singleSeconds ? "slower than one instance" : "less than half the saving predicted")}" : $"{source}, confirming {_suspect!.Value.Source}";
                _inboundRate = measured;
                _inboundAt = now;
                _inboundConfirmed = false;
                _suspect = null;
            }
            else
            {
                _suspect = (rate, now, source);
            }
        }
    }

    /// <summary>Gets the slow load that a second one must confirm before it limits the plans, or null.</summary>
    public string? InboundSuspicion
    {
        get
        {
            lock (_gate)
            {
                return _suspect is { } s && _time.GetUtcNow() - s.At < InboundLifetime ? s.Source : null;
            }
        }
    }

    /// <summary>The measured inbound limit, unless it was last measured <see cref="InboundLifetime"/> or more before <paramref name="now"/>.</summary>
    private double? InboundLocked(DateTimeOffset now) => now - _inboundAt < InboundLifetime ? _inboundRate : null;

    private void Record(ref RateMean rate, ref double? latency, ref DateTimeOffset last, long bytes, TimeSpan firstByte, TimeSpan transfer, bool timeWeighted = true)
    {
        if (firstByte >= TimeSpan.Zero)
        {
            latency = latency is { } c ? c + (SampleWeight * (firstByte.TotalSeconds - c)) : firstByte.TotalSeconds;
        }

        if (bytes >= MinBandwidthSampleBytes && transfer > TimeSpan.Zero)
        {
            rate = rate.Add(bytes / transfer.TotalSeconds, timeWeighted ? 1 - Math.Exp(-transfer.TotalSeconds / RateTimeConstant.TotalSeconds) : SampleWeight);
            last = _time.GetUtcNow();
        }
    }

    /// <summary>
    /// An exponentially weighted mean whose samples weigh unequally, divided by the weight it has seen (so a first short
    /// sample does not stand alone until long ones outweigh it: four equal probes are their plain mean).
    /// </summary>
    private readonly record struct RateMean(double Sum, double Weight)
    {
        public double? Value => Weight > 0 ? Sum / Weight : null;

        public RateMean Add(double sample, double weight) => new(((1 - weight) * Sum) + (weight * sample), ((1 - weight) * Weight) + weight);
    }

    private static TimeSpan? Span(double? seconds) => seconds is { } s ? TimeSpan.FromSeconds(s) : null;
}
