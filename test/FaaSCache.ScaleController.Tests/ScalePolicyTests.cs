namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class ScalePolicyTests
{
    private static readonly AggregatedVote NoVotes = new(ScaleDirection.None, 0, "no votes");
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero));
    private readonly ScaleControllerOptions _options = new()
    {
        MinInstances = 0,
        MaxInstances = 4,
        ScaleOutCooldown = TimeSpan.FromSeconds(1),
        ScaleInCooldown = TimeSpan.FromSeconds(30),
        IdleToZero = TimeSpan.FromSeconds(60),
    };

    [Fact]
    public void Scales_out_to_the_votes_target()
    {
        ScalePolicy policy = new(_options, _time);

        ScaleDecision decision = policy.Decide(Busy(current: 1, Out(3)));

        Assert.Equal(1, decision.From);
        Assert.Equal(3, decision.To);
    }

    [Fact]
    public void Clamps_a_scale_out_to_max_instances()
    {
        ScalePolicy policy = new(_options, _time);

        Assert.Equal(4, policy.Decide(Busy(current: 2, Out(9))).To);
        ScaleDecision atMax = policy.Decide(Busy(current: 4, Out(5)));
        Assert.False(atMax.Changes);
        Assert.Contains("maxInstances 4", atMax.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Brings_the_count_up_to_min_instances()
    {
        _options.MinInstances = 2;
        ScalePolicy policy = new(_options, _time);

        ScaleDecision decision = policy.Decide(new PolicyInput(0, NoVotes, null, 0));

        Assert.Equal(2, decision.To);
        Assert.Contains("minInstances", decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Waits_out_the_scale_out_cooldown_between_scale_outs()
    {
        ScalePolicy policy = new(_options, _time);
        Assert.Equal(2, policy.Decide(Busy(current: 1, Out(2))).To);

        _time.Advance(TimeSpan.FromMilliseconds(500));
        ScaleDecision tooSoon = policy.Decide(Busy(current: 2, Out(3)));
        _time.Advance(TimeSpan.FromMilliseconds(500));
        ScaleDecision later = policy.Decide(Busy(current: 2, Out(3)));

        Assert.False(tooSoon.Changes);
        Assert.Contains("cool-down", tooSoon.Reason, StringComparison.Ordinal);
        Assert.Equal(3, later.To);
    }

    [Fact]
    public void Scales_in_one_at_a_time_only_after_the_scale_in_cooldown_since_any_change()
    {
        ScalePolicy policy = new(_options, _time);
        Assert.Equal(3, policy.Decide(Busy(current: 1, Out(3))).To);

        _time.Advance(TimeSpan.FromSeconds(29));
        ScaleDecision tooSoon = policy.Decide(Busy(current: 3, In(3)));
        _time.Advance(TimeSpan.FromSeconds(1));
        ScaleDecision later = policy.Decide(Busy(current: 3, In(3)));

        Assert.False(tooSoon.Changes);
        Assert.Equal(2, later.To);
    }

    [Fact]
    public void Does_not_scale_in_below_min_instances()
    {
        _options.MinInstances = 2;
        ScalePolicy policy = new(_options, _time);

        ScaleDecision decision = policy.Decide(Busy(current: 2, In(2)));

        Assert.False(decision.Changes);
    }

    [Fact]
    public void Scales_an_idle_app_to_zero_when_every_vote_is_in()
    {
        ScalePolicy policy = new(_options, _time);
        DateTimeOffset lastRequest = _time.GetUtcNow();

        _time.Advance(TimeSpan.FromSeconds(59));
        ScaleDecision notYet = policy.Decide(new PolicyInput(2, new AggregatedVote(ScaleDirection.None, 2, "none"), lastRequest, 0));
        _time.Advance(TimeSpan.FromSeconds(1));
        ScaleDecision votesNotAllIn = policy.Decide(new PolicyInput(2, new AggregatedVote(ScaleDirection.None, 2, "none"), lastRequest, 0));
        ScaleDecision requestInFlight = policy.Decide(new PolicyInput(2, In(2), lastRequest, 1));
        ScaleDecision idle = policy.Decide(new PolicyInput(2, In(2), lastRequest, 0));

        Assert.False(notYet.Changes);
        Assert.False(votesNotAllIn.Changes);
        Assert.Equal(1, requestInFlight.To); // an ordinary scale-in, not idle
        Assert.False(idle.Changes); // the scale-in just made restarts the cool-down
        _time.Advance(TimeSpan.FromSeconds(30));
        ScaleDecision toZero = policy.Decide(new PolicyInput(1, In(1), lastRequest, 0));
        Assert.Equal(0, toZero.To);
        Assert.StartsWith("idle", toZero.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Scales_from_zero_when_a_request_is_held()
    {
        _options.MinInstances = 0;
        ScalePolicy policy = new(_options, _time);

        ScaleDecision decision = policy.Decide(new PolicyInput(0, NoVotes, _time.GetUtcNow(), 1), ScaleTrigger.FrontDoor);

        Assert.Equal(1, decision.To);
        Assert.Equal(ScaleTrigger.FrontDoor, decision.Trigger);
        Assert.Contains("held", decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void An_urgent_vote_acts_at_once_within_max_instances()
    {
        ScalePolicy policy = new(_options, _time);
        Assert.Equal(2, policy.Decide(Busy(current: 1, Out(2))).To);

        UrgentDecision urgent = policy.DecideUrgent(2, 6, "app-1", "bandwidth", "a 400 MB miss");

        Assert.True(urgent.Accepted);
        Assert.Equal(4, urgent.Decision.To); // no cool-down, clamped to max
        Assert.Contains("clamped", urgent.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void An_urgent_vote_at_max_instances_is_refused()
    {
        ScalePolicy policy = new(_options, _time);

        UrgentDecision urgent = policy.DecideUrgent(4, 6, "app-1", "bandwidth", "a 400 MB miss");

        Assert.False(urgent.Accepted);
        Assert.Equal(4, urgent.Decision.To);
        Assert.Contains("refused", urgent.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void The_history_keeps_every_change_and_only_new_reasons_of_kept_counts()
    {
        var history = new DecisionHistory(3);
        DateTimeOffset t = _time.GetUtcNow();

        Assert.True(history.Add(new ScaleDecision(t, ScaleTrigger.Poll, 1, 1, "none: quiet")));
        Assert.False(history.Add(new ScaleDecision(t, ScaleTrigger.Poll, 1, 1, "none: quiet")));
        Assert.True(history.Add(new ScaleDecision(t, ScaleTrigger.Poll, 1, 2, "out")));
        Assert.True(history.Add(new ScaleDecision(t, ScaleTrigger.Poll, 2, 3, "out")));
        Assert.True(history.Add(new ScaleDecision(t, ScaleTrigger.Poll, 3, 3, "none: busy")));

        Assert.Equal(["out", "out", "none: busy"], history.Snapshot().Select(d => d.Reason));
    }

    private static AggregatedVote Out(int target) => new(ScaleDirection.Out, target, "out: wanted");

    private static AggregatedVote In(int current) => new(ScaleDirection.In, current - 1, "in: all votes in");

    private PolicyInput Busy(int current, AggregatedVote votes) => new(current, votes, _time.GetUtcNow(), 1);
}
