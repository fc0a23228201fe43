namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// Turns aggregated votes into an instance count (§4): clamps to minInstances..maxInstances, waits out the cool-downs
/// (scale-out at most every <see cref="ScaleControllerOptions.ScaleOutCooldown"/>, scale-in only
/// <see cref="ScaleControllerOptions.ScaleInCooldown"/> after any change), scales an idle app to its minimum (zero by
/// default) when its <see cref="IKeepAlivePolicy"/> says so, loads it again when that policy pre-warms it (§3.3),
/// scales from zero when a request waits, and lets urgent votes act at once. Each decision is assumed to be
/// carried out (the cool-downs run from it). Not thread-safe: the controller serialises its calls.
/// </summary>
public sealed class ScalePolicy
{
    private readonly ScaleControllerOptions _options;
    private readonly TimeProvider _time;
    private readonly IKeepAlivePolicy _keepAlive;
    private readonly DateTimeOffset _started;
    private DateTimeOffset? _lastScaleOut;
    private DateTimeOffset? _lastChange;

    /// <summary>Initializes a new instance of the <see cref="ScalePolicy"/> class with the fixed keep-alive (<see cref="ScaleControllerOptions.IdleToZero"/>).</summary>
    public ScalePolicy(ScaleControllerOptions options, TimeProvider time)
        : this(options, time, new FixedKeepAlive(options?.IdleToZero ?? TimeSpan.Zero, time))
    {
    }

    /// <summary>Initializes a new instance of the <see cref="ScalePolicy"/> class with <paramref name="keepAlive"/> deciding when an idle app unloads and reloads.</summary>
    public ScalePolicy(ScaleControllerOptions options, TimeProvider time, IKeepAlivePolicy keepAlive)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(time);
        ArgumentNullException.ThrowIfNull(keepAlive);
        _options = options;
        _time = time;
        _keepAlive = keepAlive;
        _started = time.GetUtcNow();
    }

    /// <summary>Decides the instance count from a poll's votes or a front-door request.</summary>
    public ScaleDecision Decide(PolicyInput input, ScaleTrigger trigger = ScaleTrigger.Poll)
    {
        ArgumentNullException.ThrowIfNull(input);
        DateTimeOffset now = _time.GetUtcNow();
        int current = input.Current;
        int min = _options.MinInstances;
        int max = _options.MaxInstances;
        ScaleDecision Keep(string reason) => new(now, trigger, current, current, reason);
        ScaleDecision To(int count, string reason) => Record(new ScaleDecision(now, trigger, current, count, reason));

        if (current == 0 && input.PendingRequests > 0)
        {
            return To(Math.Max(1, min), Text($"scale from zero: {input.PendingRequests} request(s) held with no instance"));
        }

        if (current < min)
        {
            return To(min, Text($"below minInstances {min}"));
        }

        if (current > max)
        {
            return To(max, Text($"above maxInstances {max}"));
        }

        bool allIn = current == 0 || input.Votes.Direction == ScaleDirection.In;
        KeepAliveVerdict verdict = input.PendingRequests == 0 ? _keepAlive.Evaluate(input, _started) : new(KeepAliveAction.Keep, "requests in flight");
        if (verdict.Action == KeepAliveAction.Unload && allIn && current > min)
        {
            return InCooledDown(now)
                ? To(min, Text($"{verdict.Reason} and every vote in: to minInstances {min}"))
                : Keep(Text($"{Stable(verdict.Reason)}, but scale-in cool-down ({_options.ScaleInCooldown.TotalSeconds:0.#} s after the last change) runs"));
        }

        if (verdict.Action == KeepAliveAction.Load && current == 0)
        {
            return To(Math.Max(1, min), verdict.Reason);
        }

        switch (input.Votes.Direction)
        {
            case ScaleDirection.Out:
                int target = Math.Min(input.Votes.Target, max);
                if (target <= current)
                {
                    return Keep(Text($"at maxInstances {max}; {input.Votes.Reason}"));
                }

                if (_lastScaleOut is { } last && now - last < _options.ScaleOutCooldown)
                {
                    return Keep(Text($"scale-out cool-down ({_options.ScaleOutCooldown.TotalSeconds:0.#} s) runs; {input.Votes.Reason}"));
                }

                return To(target, input.Votes.Reason);
            case ScaleDirection.In:
                // While the keep-alive policy holds the app loaded, only it unloads the app: votes stop at one instance.
                int floor = verdict.HoldsLoaded ? Math.Max(1, min) : min;
                int fewer = Math.Max(floor, input.Votes.Target);
                if (fewer >= current)
                {
                    return Keep(verdict.HoldsLoaded && floor > min
                        ? Text($"the keep-alive holds one instance ({Stable(verdict.Reason)}); {input.Votes.Reason}")
                        : Text($"at minInstances {min}; {input.Votes.Reason}"));
                }

                return InCooledDown(now)
                    ? To(fewer, input.Votes.Reason)
                    : Keep(Text($"scale-in cool-down ({_options.ScaleInCooldown.TotalSeconds:0.#} s after the last change) runs; {input.Votes.Reason}"));
            default:
                return Keep(input.Votes.Reason);
        }
    }

    /// <summary>Decides on an unrequested vote for <paramref name="target"/> instances: acts at once (no cool-down), within maxInstances.</summary>
    public UrgentDecision DecideUrgent(int current, int target, string instanceId, string voter, string reason)
    {
        DateTimeOffset now = _time.GetUtcNow();
        int max = _options.MaxInstances;
        string why = $"urgent {voter} vote of {instanceId} for {target.ToString(CultureInfo.InvariantCulture)}: {reason}";
        if (current >= max)
        {
            return new UrgentDecision(false, new ScaleDecision(now, ScaleTrigger.Urgent, current, current, Text($"refused, already at maxInstances {max}; {why}")));
        }

        int to = Math.Min(target, max);
        if (to <= current)
        {
            return new UrgentDecision(true, new ScaleDecision(now, ScaleTrigger.Urgent, current, current, Text($"already {current} instance(s); {why}")));
        }

        string clamp = to < target ? Text($" (clamped to maxInstances {max})") : "";
        return new UrgentDecision(true, Record(new ScaleDecision(now, ScaleTrigger.Urgent, current, to, why + clamp)));
    }

    private static string Text(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    // A kept count's reason without the idle time that grows every poll: the history keeps a kept count only when its reason changes.
    private static string Stable(string reason) => reason.IndexOf(':', StringComparison.Ordinal) is var colon and > 0 ? reason[..colon] : reason;

    private bool InCooledDown(DateTimeOffset now) => _lastChange is not { } last || now - last >= _options.ScaleInCooldown;

    private ScaleDecision Record(ScaleDecision decision)
    {
        if (decision.To > decision.From)
        {
            _lastScaleOut = decision.At;
        }

        if (decision.Changes)
        {
            _lastChange = decision.At;
        }

        return decision;
    }
}
