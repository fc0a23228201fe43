using System.Runtime.InteropServices;
using FaaSCache.Scaling;
using FaaSCache.Scaling.Voters;
using Microsoft.Azure.WebJobs.Host.Scale;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// An app's instances over one replay, scaled by §4's voters as the scale controller does it (docs/scaling.md): every
/// <see cref="SimulationOptions.PollInterval"/> of trace time each instance's compute, cache-size and bandwidth voters
/// vote by their own rules (<see cref="ComputeScaleMonitor.Vote"/> over a real <see cref="InvocationMeter"/> fed the
/// simulated invocations, <see cref="CacheSizeScaleMonitor.Vote"/> over the simulated cachelet's evictions and accesses,
/// <see cref="BandwidthScaleMonitor.Vote"/> over a real <see cref="BandwidthScaler"/>'s scaled loads); the votes combine
/// by the WebJobs rule (<see cref="ScaleVoteAggregator.Aggregate"/>); out goes to the out-voters' largest target (at
/// least one more), in to one fewer, within 1 .. <see cref="SimulationOptions.MaxInstances"/> and the cool-downs. A
/// miss the planner splits over more instances than run asks at once (the cachelet's urgent vote). A started instance
/// joins <see cref="TransferProfile.InstanceLoad"/> later; a scale-in removes the newest. With a fixed layout nothing
/// votes. Deterministic: it runs on the trace's time only.
/// </summary>
/// <remarks>
/// While one instance runs, nothing happened since the last poll and that poll did not vote out, only the last poll
/// before the next access (or invocation end) is run: without events every voter's inputs only decay (the meter's window
/// and the scaled-load hold empty out, nothing is evicted or accessed), so none of them can vote out, and one instance is
/// the floor. This keeps the replay's cost per invocation, not per poll interval of a 14-day trace.
/// </remarks>
internal sealed class AppScaler
{
    private readonly PolicySet _policy;
    private readonly SimulationOptions _options;
    private readonly ScalingOptions _scaling;
    private readonly AppLayout _layout;
    private readonly SimClock _clock = new();
    private readonly TransferProfiler _profiler;
    private readonly List<SimInstance> _instances = [];
    private readonly List<long> _joinAt = [];
    private readonly PriorityQueue<InvocationMeter.Invocation, long> _ends = new();
    private readonly List<ScaleVote> _votes = [];
    private readonly Dictionary<int, OpenInvocation> _open = [];
    private readonly long _pollMicros;
    private readonly long _loadMicros;
    private readonly long _holdMicros;
    private readonly bool _compute;
    private readonly bool _cacheSize;
    private readonly bool _bandwidth;
    private long _nextPoll;
    private long _lastScaleOut;
    private long _lastChange;
    private long _since;
    private bool _activity;
    private bool _lastOut;
    private long _evictionsGone;

    public AppScaler(AppLayout layout, PolicySet policy, SimulationOptions options)
    {
        _policy = policy;
        _options = options;
        _scaling = options.Scaling;
        _layout = layout;
        _pollMicros = (long)options.PollInterval.TotalMicroseconds;
        _loadMicros = (long)(options.Transfer?.InstanceLoad?.TotalMicroseconds ?? 0);
        _holdMicros = (long)BandwidthScaleMonitor.HoldWindow.TotalMicroseconds;
        _profiler = SimInstance.Profiler(options.Transfer, _clock);
        _compute = ScaleVoteAggregator.IsEnabled(ComputeScaleMonitor.VoterName, _scaling);
        _cacheSize = ScaleVoteAggregator.IsEnabled(CacheSizeScaleMonitor.VoterName, _scaling);
        _bandwidth = ScaleVoteAggregator.IsEnabled(BandwidthScaleMonitor.VoterName, _scaling);
    }

    /// <summary>Gets the instances in the ring now (0 .. Ready - 1).</summary>
    public int Ready => _instances.Count;

    /// <summary>Gets the instances running or starting (the controller's count).</summary>
    public int Live => _joinAt.Count + Ready;

    /// <summary>Gets the most instances in the ring at once.</summary>
    public int Peak { get; private set; }

    /// <summary>Gets the instance-seconds the app ran (ready instances times loaded time).</summary>
    public double InstanceSeconds { get; private set; }

    /// <summary>Gets the seconds the app was loaded.</summary>
    public double LoadedSeconds { get; private set; }

    /// <summary>Gets the scale-outs (by polls and urgent votes).</summary>
    public int ScaleOuts { get; private set; }

    /// <summary>Gets the scale-ins.</summary>
    public int ScaleIns { get; private set; }

    /// <summary>Gets the evictions of every cachelet the app had, gone ones included.</summary>
    public long Evictions => _evictionsGone + _instances.Sum(i => i.Evictions);

    /// <summary>Instance <paramref name="index"/>: its cache and voters' inputs.</summary>
    public SimInstance Instance(int index) => _instances[index];

    /// <summary>Each key's owner now.</summary>
    public int[] Owners => _layout.OwnersWith(Ready);

    /// <summary>The app is loaded at <paramref name="micros"/> on its fixed instances, or on one (the controller scales from zero to one).</summary>
    public void Load(long micros)
    {
        _clock.Set(micros);
        _since = micros;
        int count = _layout.FixedInstances ?? 1;
        for (int i = 0; i < count; i++)
        {
            _instances.Add(new SimInstance(_policy, _clock, _profiler, _options.MaxInstances));
        }

        Peak = Math.Max(Peak, Ready);
        _lastScaleOut = _lastChange = micros;
        _nextPoll = micros + _pollMicros;
        _activity = _lastOut = false;
    }

    /// <summary>The app is unloaded at <paramref name="micros"/> (after its idle time): its instances go.</summary>
    public void Unload(long micros)
    {
        AdvanceTo(micros);
        Account(micros);
        _evictionsGone += _instances.Sum(i => i.Evictions);
        _instances.Clear();
        _joinAt.Clear();
    }

    /// <summary>Runs the controller up to <paramref name="micros"/>: invocations that end, instances that join, polls.</summary>
    public void AdvanceTo(long micros)
    {
        if (_layout.FixedInstances is not null)
        {
            _clock.Set(micros);
            return;
        }

        while (true)
        {
            long end = _ends.TryPeek(out _, out long e) ? e : long.MaxValue;
            long join = _joinAt.Count > 0 ? _joinAt[0] : long.MaxValue;
            if (Live == 1 && !_activity && !_lastOut)
            {
                // Quiet at the floor: only the last poll before the next event can matter (see the remarks).
                long horizon = Math.Min(micros, Math.Min(end, join));
                if (horizon >= _nextPoll)
                {
                    _nextPoll += (horizon - _nextPoll) / _pollMicros * _pollMicros;
                }
            }

            long next = Math.Min(end, Math.Min(join, _nextPoll));
            if (next > micros)
            {
                break;
            }

            _clock.Set(next);
            if (next == end)
            {
                _ends.Dequeue().Dispose();
                _activity = true;
            }
            else if (next == join)
            {
                Join(next);
            }
            else
            {
                Poll(next);
                _nextPoll += _pollMicros;
            }
        }

        _clock.Set(micros);
    }

    /// <summary>The instance that runs invocation <paramref name="invocation"/> (the front door's round robin); starts it on first sight.</summary>
    public int InstanceOf(int invocation, long micros)
    {
        if (_layout.FixedInstances is not null)
        {
            return invocation % Ready;
        }

        _activity = true;
        ref OpenInvocation open = ref CollectionsMarshal.GetValueRefOrAddDefault(_open, invocation, out bool seen);
        if (!seen)
        {
            open = new OpenInvocation(invocation % Ready, micros, _instances[invocation % Ready].Meter.Start());
        }
        else if (open.Instance >= Ready)
        {
            // Its instance left (scaled in) between two of its accesses: the front door sends the rest elsewhere.
            open.Instance = invocation % Ready;
        }

        return open.Instance;
    }

    /// <summary>
    /// One access of <paramref name="invocation"/> took <paramref name="micros"/> (its accesses run one after another);
    /// after its last one the invocation ends.
    /// </summary>
    public void Accessed(int invocation, long startMicros, double micros, bool last)
    {
        ref OpenInvocation open = ref CollectionsMarshal.GetValueRefOrNullRef(_open, invocation);
        if (Unsafe.IsNullRef(ref open))
        {
            return;
        }

        open.BusyUntil = Math.Max(open.BusyUntil, startMicros) + (long)Math.Ceiling(micros);
        if (last)
        {
            _ends.Enqueue(open.Meter, open.BusyUntil);
            _open.Remove(invocation);
        }
    }

    /// <summary>
    /// Instance <paramref name="index"/> reads <paramref name="sizeBytes"/> from storage: the planner may share it out
    /// (§4); a plan for more instances than run asks the controller at once.
    /// </summary>
    public void StorageRead(int index, string key, long sizeBytes)
    {
        if (_layout.FixedInstances is not null || !_scaling.Bandwidth || !ScaledLoadModel.Splits(sizeBytes))
        {
            return;
        }

        BandwidthScaler scaler = _instances[index].Bandwidth;
        BandwidthPlan plan = scaler.Plan(sizeBytes, Ready);
        if (plan.Instances <= 1)
        {
            return;
        }

        _activity = true;
        _instances[index].LastScaledLoad = _clock.Micros;
        scaler.Record(new ScaledLoadRecord(_clock.GetUtcNow(), key, sizeBytes, plan.Instances, Math.Min(plan.Instances, Ready), 0, TimeSpan.Zero, "ranges", plan.Reason));
        if (plan.Instances > Live && Live < _options.MaxInstances)
        {
            ScaleTo(Math.Min(plan.Instances, _options.MaxInstances), _clock.Micros);
        }
    }

    /// <summary>Adds the loaded time up to <paramref name="micros"/> to the instance-seconds.</summary>
    private void Account(long micros)
    {
        double seconds = (micros - _since) / 1e6;
        LoadedSeconds += seconds;
        InstanceSeconds += seconds * Ready;
        _since = micros;
    }

    private void Poll(long micros)
    {
        int live = Live;
        int outTarget = 0;
        _votes.Clear();
        for (int i = 0; i < Ready; i++)
        {
            SimInstance instance = _instances[i];
            if (_compute)
            {
                InvocationSample sample = instance.Meter.Sample();
                ScaleVote vote = ComputeScaleMonitor.Vote(sample, live, _scaling);
                outTarget = Math.Max(outTarget, vote == ScaleVote.ScaleOut ? ComputeScaleMonitor.Target(sample.Concurrency, Math.Max(live, 1), null, _scaling) : 0);
                _votes.Add(vote);
            }

            if (_cacheSize)
            {
                (long maxEvictions, long accesses) = instance.TakeSample();
                double seconds = (micros - instance.LastSample) / 1e6;
                _votes.Add(CacheSizeScaleMonitor.Vote(maxEvictions, readsAfterMemoryEviction: 0, seconds > 0 ? accesses / seconds : 0, _scaling));
                instance.LastSample = micros;
            }

            if (_bandwidth)
            {
                // The scaler's loads in the hold window (none to look up when this instance recorded none in it).
                IReadOnlyList<ScaledLoadRecord> recent = instance.LastScaledLoad >= micros - _holdMicros ? instance.Bandwidth.Recent(BandwidthScaleMonitor.HoldWindow) : [];
                int largest = recent.Count == 0 ? 0 : recent.Max(r => r.Planned);
                ScaleVote vote = BandwidthScaleMonitor.Vote(recent.Count, largest, live);
                outTarget = Math.Max(outTarget, vote == ScaleVote.ScaleOut ? largest : 0);
                _votes.Add(vote);
            }
        }

        ScaleVote aggregate = ScaleVoteAggregator.Aggregate(_votes, live);
        _lastOut = aggregate == ScaleVote.ScaleOut;
        _activity = false;
        if (aggregate == ScaleVote.ScaleOut)
        {
            // As the controller's VoteAggregator: an out-vote whose target is met still asks for one more.
            int target = Math.Min(outTarget > live ? outTarget : live + 1, _options.MaxInstances);
            if (target > live && micros - _lastScaleOut >= (long)_options.ScaleOutCooldown.TotalMicroseconds)
            {
                ScaleTo(target, micros);
            }
        }
        else if (aggregate == ScaleVote.ScaleIn && live > 1 && micros - _lastChange >= (long)_options.ScaleInCooldown.TotalMicroseconds)
        {
            ScaleTo(live - 1, micros);
        }
    }

    private void ScaleTo(int count, long micros)
    {
        if (count > Live)
        {
            ScaleOuts++;
            _lastScaleOut = micros;
            while (Live < count)
            {
                _joinAt.Add(micros + _loadMicros);
            }
        }
        else
        {
            ScaleIns++;
            while (Live > count)
            {
                if (_joinAt.Count > 0)
                {
                    _joinAt.RemoveAt(_joinAt.Count - 1);
                }
                else
                {
                    Account(micros);
                    SimInstance gone = _instances[Ready - 1];
                    _evictionsGone += gone.Evictions;
                    _instances.RemoveAt(Ready - 1);
                    Reown();
                }
            }
        }

        _lastChange = micros;
        if (_loadMicros == 0)
        {
            Join(micros);
        }
    }

    private void Join(long micros)
    {
        Account(micros);
        int joined = 0;
        while (_joinAt.Count > 0 && _joinAt[0] <= micros)
        {
            _joinAt.RemoveAt(0);
            _instances.Add(new SimInstance(_policy, _clock, _profiler, _options.MaxInstances));
            joined++;
        }

        if (joined > 0)
        {
            Peak = Math.Max(Peak, Ready);
            Reown();
        }
    }

    /// <summary>The ring changed: every remaining cachelet re-flags what it owns.</summary>
    private void Reown()
    {
        int[] owners = _layout.OwnersWith(Ready);
        for (int i = 0; i < Ready; i++)
        {
            _instances[i].Reown(i, owners);
        }
    }
}

/// <summary>An invocation between its first and its last access: its instance, when its accesses so far end, its meter entry.</summary>
internal struct OpenInvocation(int instance, long busyUntil, InvocationMeter.Invocation meter)
{
    public int Instance = instance;

    public long BusyUntil = busyUntil;

    public readonly InvocationMeter.Invocation Meter = meter;
}
