namespace FaaSCache.ScaleController.Tests;

/// <summary>The scale policy's idle rule under <c>--keep-alive histogram</c> (a regular app: pre-warm 9 min, keep-alive 3.1 min).</summary>
[Trait("Category", "Unit")]
public sealed class ScalePolicyKeepAliveTests
{
    private const string App = "app";
    private static readonly AggregatedVote AllIn = new(ScaleDirection.In, 0, "every vote in");
    private static readonly AggregatedVote NoVotes = new(ScaleDirection.None, 0, "no instance to vote");
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero));
    private readonly ScaleControllerOptions _options = new() { MaxInstances = 4, ScaleInCooldown = TimeSpan.FromSeconds(30), KeepAlive = KeepAliveMode.Histogram };

    [Fact]
    public void Unloads_right_after_the_request_reloads_at_the_pre_warm_time_and_unloads_when_the_keep_alive_expires()
    {
        ScalePolicy policy = Regular(out DateTimeOffset idleSince);

        ScaleDecision unload = policy.Decide(new PolicyInput(1, AllIn, idleSince, 0, idleSince));
        _time.Advance(TimeSpan.FromMinutes(8.9));
        ScaleDecision waits = policy.Decide(new PolicyInput(0, NoVotes, idleSince, 0, idleSince));
        _time.Advance(TimeSpan.FromMinutes(0.1));
        ScaleDecision reload = policy.Decide(new PolicyInput(0, NoVotes, idleSince, 0, idleSince));
        _time.Advance(TimeSpan.FromMinutes(3.1));
        ScaleDecision expired = policy.Decide(new PolicyInput(1, AllIn, idleSince, 0, idleSince));

        Assert.Equal((1, 0), (unload.From, unload.To));
        Assert.StartsWith("before the pre-warm time", unload.Reason, StringComparison.Ordinal);
        Assert.False(waits.Changes);
        Assert.Equal((0, 1), (reload.From, reload.To));
        Assert.StartsWith("pre-warm", reload.Reason, StringComparison.Ordinal);
        Assert.Equal((1, 0), (expired.From, expired.To));
        Assert.StartsWith("keep-alive expired", expired.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void An_unload_waits_for_every_vote_in_and_the_scale_in_cooldown()
    {
        ScalePolicy policy = Regular(out DateTimeOffset idleSince);
        ScaleDecision scaledOut = policy.Decide(new PolicyInput(1, new AggregatedVote(ScaleDirection.Out, 2, "busy"), idleSince, 1, idleSince));

        ScaleDecision votedOut = policy.Decide(new PolicyInput(2, new AggregatedVote(ScaleDirection.None, 2, "a vote stays"), idleSince, 0, idleSince));
        ScaleDecision coolingDown = policy.Decide(new PolicyInput(2, AllIn, idleSince, 0, idleSince));
        _time.Advance(TimeSpan.FromSeconds(30));
        ScaleDecision unload = policy.Decide(new PolicyInput(2, AllIn, idleSince, 0, idleSince));

        Assert.Equal(2, scaledOut.To);
        Assert.False(votedOut.Changes);
        Assert.False(coolingDown.Changes);
        Assert.Contains("cool-down", coolingDown.Reason, StringComparison.Ordinal);
        Assert.Equal(0, unload.To);
    }

    [Fact]
    public void A_pre_warm_starts_min_instances_and_nothing_with_requests_in_flight()
    {
        _options.MinInstances = 0;
        ScalePolicy policy = Regular(out DateTimeOffset idleSince);
        _time.Advance(TimeSpan.FromMinutes(10));

        ScaleDecision busy = policy.Decide(new PolicyInput(1, new AggregatedVote(ScaleDirection.None, 1, "busy"), idleSince, 2, idleSince));
        ScaleDecision reload = policy.Decide(new PolicyInput(0, NoVotes, idleSince, 0, idleSince));

        Assert.False(busy.Changes);
        Assert.Equal(1, reload.To);
    }

    [Fact]
    public void Votes_do_not_unload_a_pre_warmed_app()
    {
        ScalePolicy policy = Regular(out DateTimeOffset idleSince);
        _time.Advance(TimeSpan.FromMinutes(10));

        ScaleDecision twoToOne = policy.Decide(new PolicyInput(2, new AggregatedVote(ScaleDirection.In, 1, "in: idle"), idleSince, 0, idleSince));
        _time.Advance(TimeSpan.FromSeconds(30));
        ScaleDecision oneStays = policy.Decide(new PolicyInput(1, new AggregatedVote(ScaleDirection.In, 0, "in: idle"), idleSince, 0, idleSince));

        Assert.Equal(1, twoToOne.To);
        Assert.False(oneStays.Changes);
        Assert.StartsWith("the keep-alive holds one instance", oneStays.Reason, StringComparison.Ordinal);
    }

    private ScalePolicy Regular(out DateTimeOffset idleSince)
    {
        var histogram = new HybridHistogramPolicy(_options.Histogram, _time);
        for (int i = 0; i < 20; i++)
        {
            histogram.RecordIdleTime(App, TimeSpan.FromMinutes(10.5));
        }

        idleSince = _time.GetUtcNow();
        return new ScalePolicy(_options, _time, new HistogramKeepAlive(histogram, App));
    }
}
