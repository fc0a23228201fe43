using FaaSCache.Prewarm;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>§3.3 through the real host: the snapshot written at SIGTERM pre-warms the next lifetime of the app.</summary>
[Trait("Category", "Integration")]
public sealed class PrewarmEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly TimeSpan LoadDaemonTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_model_read_twice_in_one_lifetime_is_cached_before_the_next_lifetimes_first_invocation()
    {
        var app = new PythonApp();
        var args = new Dictionary<string, string> { ["--app-name"] = "prewarm-" + Guid.NewGuid().ToString("N")[..8] };
        string key = $"{app.Models}/m.bin";

        await using (RunningHost first = await RunningHost.StartAsync(azurite, app.Build, extraArgs: args))
        {
            await first.UploadAsync(app.Models, "m.bin", new byte[64 * 1024]);
            for (int n = 0; n < 2; n++)
            {
                using HttpResponseMessage read = await first.Host.Http.GetAsync(new Uri("api/ReadModel?name=m.bin", UriKind.Relative));
                Assert.Equal(HttpStatusCode.OK, read.StatusCode);
            }

            Assert.Equal(0, await first.Host.StopAsync());
            Assert.Contains("Pre-warm snapshot written at unload", first.Host.Output, StringComparison.Ordinal);
        }

        await using RunningHost second = await RunningHost.StartAsync(azurite, app.Build, extraArgs: args);
        LoadDaemonStatus prewarm = await WaitForLoadDaemonAsync(second.Host);
        Assert.Equal("done", prewarm.State);
        // The model first (largest benefit); ReadModel's result blob, written twice, was accessed more than once too.
        Assert.Equal(key, prewarm.LoadedKeys[0]);
        Assert.Equal(2, prewarm.Loaded);

        using HttpResponseMessage again = await second.Host.Http.GetAsync(new Uri("api/ReadModel?name=m.bin", UriKind.Relative));
        Assert.Equal(HttpStatusCode.OK, again.StatusCode);
        HostStatus status = await second.Host.GetStatusAsync();
        Assert.Equal((0L, 1L), (status.Count.LocalMisses, status.Count.LocalHits));
    }

    private static async Task<LoadDaemonStatus> WaitForLoadDaemonAsync(FaaSCacheHostProcess host)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            HostStatus status = await host.GetStatusAsync();
            if (status.Prewarm is { State: not ("waiting" or "reading" or "loading" or "paused") } done)
            {
                return done;
            }

            if (clock.Elapsed > LoadDaemonTimeout)
            {
                throw new TimeoutException($"The Load Daemon was still '{status.Prewarm?.State}' after {LoadDaemonTimeout.TotalSeconds:0} s.{Environment.NewLine}{host.Output}");
            }

            await Task.Delay(100);
        }
    }
}
