using FaaSCache.Prewarm;

namespace FaaSCache.ScaleController.Tests;

/// <summary>
/// <c>--keep-alive histogram</c> with real host processes against Azurite, on 1-second bins: a stored histogram (10 idle
/// times of 20.5 s, 10 of 90.5 s) gives pre-warm 18 s and an unload at 100.1 s after the app goes idle.
/// </summary>
[Trait("Category", "Integration")]
public sealed class HistogramKeepAliveProcessTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(240);

    [Fact]
    public async Task The_state_store_round_trips_an_apps_histogram_and_has_none_for_a_new_app()
    {
        var store = new HistogramStateStore(azurite.ConnectionString);
        string app = "store" + Guid.NewGuid().ToString("N")[..8];
        IdleTimeHistogram histogram = Seeded(TimeSpan.FromSeconds(1));

        Assert.Null(await store.LoadAsync(app, CancellationToken.None));
        int bytes = await store.SaveAsync(app, HistogramState.From(histogram), CancellationToken.None);
        HistogramState? loaded = await store.LoadAsync(app, CancellationToken.None);

        var restored = new IdleTimeHistogram(TimeSpan.FromSeconds(1), 240);
        Assert.NotNull(loaded);
        loaded.RestoreInto(restored);
        Assert.Equal(histogram.Counts.ToArray(), restored.Counts.ToArray());
        Assert.InRange(bytes, 640, 1024);
        output.WriteLine($"state of {histogram.Total} idle times: {bytes} bytes");
    }

    [Fact]
    public async Task Unloads_after_the_request_reloads_at_the_pre_warm_time_unloads_when_the_keep_alive_expires_and_a_restarted_controller_keeps_the_histogram()
    {
        string app = "histo" + Guid.NewGuid().ToString("N")[..8];
        await new HistogramStateStore(azurite.ConnectionString).SaveAsync(app, HistogramState.From(Seeded(TimeSpan.FromSeconds(1))), CancellationToken.None);
        Action<ScaleControllerOptions> configure = o =>
        {
            o.AppName = app;
            o.KeepAlive = KeepAliveMode.Histogram;
            o.Histogram.BinWidth = TimeSpan.FromSeconds(1);
            o.HistogramSaveDelay = TimeSpan.FromMilliseconds(200);
            o.ScaleInCooldown = TimeSpan.FromSeconds(1);
        };

        int idleTimes;
        await using (ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, configure))
        {
            ScaleStatusReport start = await controller.GetStatusAsync();
            Assert.Equal(("histogram", "histogram", 20), (start.KeepAlive!.Mode, start.KeepAlive.Basis, start.KeepAlive.IdleTimes));
            Assert.Equal(18, start.KeepAlive.PreWarmSeconds!.Value, 6);

            // A cold start, then at once a second request: one idle time of about 0 s (bin 0; the head stays at bin 20).
            using (HttpResponseMessage cold = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative)))
            {
                Assert.Equal(HttpStatusCode.OK, cold.StatusCode);
            }

            using (HttpResponseMessage warm = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative)))
            {
                Assert.Equal(HttpStatusCode.OK, warm.StatusCode);
            }

            await controller.WaitForAsync(s => Changes(s).Any(d => d is { From: 1, To: 0 } && d.Reason.StartsWith("before the pre-warm time", StringComparison.Ordinal)), Wait, "unloaded right after the request");
            ScaleStatusReport reloaded = await controller.WaitForAsync(s => s.Instances.Count(i => i.State == "ready") == 1, Wait, "an instance pre-warmed and ready");
            ScaleStatusReport expired = await controller.WaitForAsync(s => Changes(s).Any(d => d is { From: 1, To: 0 } && d.Reason.StartsWith("keep-alive expired", StringComparison.Ordinal)), Wait, "unloaded when the keep-alive expired");
            await controller.WaitForAsync(s => s.Current == 0 && s.Instances.All(i => i.State is "stopped"), Wait, "every instance stopped");

            List<ScaleDecision> changes = Changes(expired);
            output.WriteLine(string.Join(Environment.NewLine, changes.Select(d => $"{d.At:HH:mm:ss.fff} {d.Trigger} {d.From}->{d.To}: {d.Reason}")));
            Assert.Equal(
                [(ScaleTrigger.FrontDoor, 0, 1, "scale from zero"), (ScaleTrigger.Poll, 1, 0, "before the pre-warm time"), (ScaleTrigger.Poll, 0, 1, "pre-warm"), (ScaleTrigger.Poll, 1, 0, "keep-alive expired")],
                changes.Select(d => (d.Trigger, d.From, d.To, d.Reason[..d.Reason.IndexOf(':', StringComparison.Ordinal)])));
            Assert.Equal(0, reloaded.HeldRequests);
            idleTimes = expired.KeepAlive!.IdleTimes!.Value;
            Assert.Equal(21, idleTimes);
        }

        // A second controller of the same app reads the state the first one wrote.
        await using ControllerUnderTest restarted = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, configure);
        KeepAliveStatus again = (await restarted.GetStatusAsync()).KeepAlive!;
        Assert.Equal(idleTimes, again.IdleTimes);
        Assert.Equal($"loaded {idleTimes} idle time(s) at start", again.State!.Note);
    }

    private static List<ScaleDecision> Changes(ScaleStatusReport status) => [.. status.Decisions.Where(d => d.Changes)];

    private static IdleTimeHistogram Seeded(TimeSpan bin)
    {
        var histogram = new IdleTimeHistogram(bin, 240);
        for (int i = 0; i < 10; i++)
        {
            histogram.Add(bin * 20.5);
            histogram.Add(bin * 90.5);
        }

        return histogram;
    }
}
