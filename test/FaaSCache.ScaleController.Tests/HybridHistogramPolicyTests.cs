using FaaSCache.Prewarm;

namespace FaaSCache.ScaleController.Tests;

/// <summary>The hybrid histogram's windows against hand-computed cases (1-minute bins, 240 of them, 10 samples minimum).</summary>
[Trait("Category", "Unit")]
public sealed class HybridHistogramPolicyTests
{
    private const string App = "app";
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero));
    private readonly HybridHistogramOptions _options = new();

    [Fact]
    public void A_regular_series_pre_warms_just_before_its_idle_time_and_keeps_alive_just_past_it()
    {
        HybridHistogramPolicy policy = Policy(Enumerable.Repeat(10.5, 20));

        KeepAliveWindows windows = policy.Windows(App);

        // Every idle time in bin 10: head = 10 min (lower edge) x 0.9 = 9 min; tail = 11 min (upper edge) x 1.1 = 12.1 min.
        Assert.Equal(WindowBasis.Histogram, windows.Basis);
        Assert.Equal(TimeSpan.FromMinutes(9), windows.PreWarm);
        Assert.Equal(3.1, windows.KeepAlive.TotalMinutes, 6);
        Assert.Contains("CV 15.46", windows.Reason, StringComparison.Ordinal); // sqrt(239): all counts in one bin of 240
    }

    [Fact]
    public void Head_and_tail_are_the_fifth_and_ninety_ninth_percentile_bins()
    {
        // 5 in bin 2, 90 in bin 30, 5 in bin 60: rank ceil(0.05 x 100) = 5 reaches bin 2; rank 99 reaches bin 60.
        HybridHistogramPolicy policy = Policy([.. Enumerable.Repeat(2.5, 5), .. Enumerable.Repeat(30.5, 90), .. Enumerable.Repeat(60.5, 5)]);

        KeepAliveWindows windows = policy.Windows(App);

        // pre-warm 2 min x 0.9 = 1.8 min; keep-alive 61 min x 1.1 - 1.8 min = 65.3 min; CV = 13.95.
        Assert.Equal(WindowBasis.Histogram, windows.Basis);
        Assert.Equal(1.8, windows.PreWarm.TotalMinutes, 6);
        Assert.Equal(65.3, windows.KeepAlive.TotalMinutes, 6);
        Assert.Contains("CV 13.95", windows.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void An_irregular_series_is_not_representative_and_falls_back_to_the_full_range()
    {
        // One idle time in every fourth bin: 60 counts of 1, CV^2 = 240 x 60 / 60^2 - 1 = 3, CV = 1.732 < 2.
        HybridHistogramPolicy policy = Policy(Enumerable.Range(0, 60).Select(i => (i * 4) + 0.5));

        KeepAliveWindows windows = policy.Windows(App);

        Assert.Equal(WindowBasis.Fallback, windows.Basis);
        Assert.Equal(TimeSpan.Zero, windows.PreWarm);
        Assert.Equal(TimeSpan.FromHours(4), windows.KeepAlive);
        Assert.Contains("CV 1.732 < 2", windows.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Too_few_idle_times_fall_back_to_the_full_range()
    {
        HybridHistogramPolicy policy = Policy(Enumerable.Repeat(10.5, 9));

        KeepAliveWindows windows = policy.Windows(App);

        Assert.Equal(WindowBasis.Fallback, windows.Basis);
        Assert.Equal((TimeSpan.Zero, TimeSpan.FromHours(4)), (windows.PreWarm, windows.KeepAlive));
        Assert.Contains("9 idle time(s), fewer than 10", windows.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Mostly_out_of_bounds_idle_times_use_the_predictors_next_idle_time()
    {
        // 6 of 10 beyond 4 h: smoothing (alpha 0.5) of 250, 270, 260, 300, 280, 290 min gives 250, 260, 260, 280, 280, 285.
        HybridHistogramPolicy policy = Policy([.. Enumerable.Repeat(10.5, 4), 250, 270, 260, 300, 280, 290]);

        KeepAliveWindows windows = policy.Windows(App);

        // pre-warm 285 x 0.85 = 242.25 min; keep-alive 285 x 0.15 x 2 = 85.5 min.
        Assert.Equal(WindowBasis.Predictor, windows.Basis);
        Assert.Equal(242.25, windows.PreWarm.TotalMinutes, 6);
        Assert.Equal(85.5, windows.KeepAlive.TotalMinutes, 6);
        Assert.Contains("60% out of bounds", windows.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Fewer_than_half_out_of_bounds_stay_with_the_histogram()
    {
        HybridHistogramPolicy policy = Policy([.. Enumerable.Repeat(10.5, 6), 250, 270, 260, 300]);

        Assert.Equal(WindowBasis.Histogram, policy.Windows(App).Basis);
    }

    [Fact]
    public void The_predictor_smooths_the_recent_idle_times_half_and_half()
    {
        Assert.Equal(TimeSpan.FromMinutes(310), IdleTimePredictor.Predict([TimeSpan.FromMinutes(300), TimeSpan.FromMinutes(320), TimeSpan.FromMinutes(310)]));
        Assert.Equal(TimeSpan.FromMinutes(7), IdleTimePredictor.Predict([TimeSpan.FromMinutes(7)]));
    }

    [Fact]
    public void A_regular_app_is_unloaded_until_the_pre_warm_time_then_loaded_until_the_keep_alive_expires()
    {
        HybridHistogramPolicy policy = Policy(Enumerable.Repeat(10.5, 20));
        DateTimeOffset idleSince = _time.GetUtcNow();

        KeepAliveAction justIdle = policy.Evaluate(App, idleSince).Action;
        _time.Advance(TimeSpan.FromMinutes(8.99));
        KeepAliveAction beforePreWarm = policy.Evaluate(App, idleSince).Action;
        _time.Advance(TimeSpan.FromMinutes(0.01));
        KeepAliveVerdict atPreWarm = policy.Evaluate(App, idleSince);
        _time.Advance(TimeSpan.FromMinutes(3.09));
        KeepAliveAction lastKept = policy.Evaluate(App, idleSince).Action;
        _time.Advance(TimeSpan.FromMinutes(0.01));
        KeepAliveVerdict expired = policy.Evaluate(App, idleSince);

        Assert.Equal([KeepAliveAction.Unload, KeepAliveAction.Unload, KeepAliveAction.Load, KeepAliveAction.Load, KeepAliveAction.Unload], [justIdle, beforePreWarm, atPreWarm.Action, lastKept, expired.Action]);
        Assert.StartsWith("pre-warm", atPreWarm.Reason, StringComparison.Ordinal);
        Assert.StartsWith("keep-alive expired", expired.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void The_fallback_keeps_the_app_loaded_for_the_whole_range_and_never_pre_warms()
    {
        HybridHistogramPolicy policy = Policy([]);
        DateTimeOffset idleSince = _time.GetUtcNow();

        _time.Advance(TimeSpan.FromHours(4) - TimeSpan.FromSeconds(1));
        KeepAliveAction before = policy.Evaluate(App, idleSince).Action;
        _time.Advance(TimeSpan.FromSeconds(1));
        KeepAliveAction after = policy.Evaluate(App, idleSince).Action;

        Assert.Equal((KeepAliveAction.Keep, KeepAliveAction.Unload), (before, after));
    }

    [Fact]
    public void Each_app_has_its_own_histogram()
    {
        HybridHistogramPolicy policy = Policy(Enumerable.Repeat(10.5, 20));

        Assert.Equal(WindowBasis.Histogram, policy.Windows(App).Basis);
        Assert.Equal(WindowBasis.Fallback, policy.Windows("other").Basis);
    }

    private HybridHistogramPolicy Policy(IEnumerable<double> idleMinutes)
    {
        var policy = new HybridHistogramPolicy(_options, _time);
        foreach (double minutes in idleMinutes)
        {
            policy.RecordIdleTime(App, TimeSpan.FromMinutes(minutes));
        }

        return policy;
    }
}
