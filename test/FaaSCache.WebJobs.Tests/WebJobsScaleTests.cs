using Microsoft.Azure.WebJobs.Host.Scale;

namespace FaaSCache.WebJobs.Tests;

/// <summary>
/// The voters as a real WebJobs host reports them: the SDK's scale services (<c>AddWebJobsScale</c>) sample the
/// extension's scale monitors into a metrics repository and answer through <see cref="IScaleStatusProvider"/>, the
/// interface behind the Functions host's <c>POST /admin/host/scale/status</c>.
/// </summary>
[Trait("Category", "Integration")]
public sealed class WebJobsScaleTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int ObjectSize = 400_000; // two fit in the smallest capacity allowed (1 MiB), three do not
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task The_hosts_scale_status_lists_the_faascache_voters_and_turns_to_scale_out_when_an_object_is_evicted_twice()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite, new Dictionary<string, string?>
        {
            ["AzureWebJobs:extensions:faasCache:capacityBytes"] = "1048576",
        }, WithScaleServices);
        IScaleStatusProvider provider = host.Host.Services.GetRequiredService<IScaleStatusProvider>();
        // The SDK samples monitors only on the primary host, which a Functions host becomes by holding a storage lease
        // (its PrimaryHostCoordinator); this test's single host is the primary.
        host.Host.Services.GetRequiredService<Microsoft.Azure.WebJobs.Hosting.IPrimaryHostStateProvider>().IsPrimary = true;

        // Quiet app: the monitors (compute, cacheSize) are sampled and the target scalers (compute, bandwidth) answer.
        AggregateScaleStatus quiet = await WaitForAsync(provider, s => s.FunctionScaleStatuses?.Keys.Any(k => k.Contains("cacheSize", StringComparison.Ordinal)) == true);
        Assert.Contains(quiet.FunctionTargetScalerResults.Keys, k => k.Contains("faascache-compute", StringComparison.Ordinal));
        Assert.Contains(quiet.FunctionTargetScalerResults.Keys, k => k.Contains("faascache-bandwidth", StringComparison.Ordinal));
        Assert.NotEqual(ScaleVote.ScaleOut, quiet.Vote);

        // Three objects in a cache that holds two, read round-robin: each is evicted again and again.
        BlobContainerClient container = await azurite.CreateContainerAsync("scale");
        string[] keys = ["a", "b", "c"];
        foreach (string name in keys)
        {
            await container.UploadBlobAsync(name, new BinaryData(new byte[ObjectSize]));
        }

        for (int round = 0; round < 3; round++)
        {
            foreach (string name in keys)
            {
                (await host.Cachelet.ReadAsync($"{container.Name}/{name}")).Dispose();
            }
        }

        Assert.True(host.Cachelet.GetAllStatistics().Max(s => s.Evictions) > 1);
        AggregateScaleStatus busy = await WaitForAsync(provider, s => s.Vote == ScaleVote.ScaleOut);
        Assert.Contains(busy.FunctionScaleStatuses, kv => kv.Key.Contains("cacheSize", StringComparison.Ordinal) && kv.Value.Vote == ScaleVote.ScaleOut);
    }

    [Fact]
    public async Task A_voter_switched_off_in_host_json_is_not_registered_with_the_hosts_scale_services()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite, new Dictionary<string, string?>
        {
            ["AzureWebJobs:extensions:faasCache:scaling:cacheSize"] = "false",
            ["AzureWebJobs:extensions:faasCache:scaling:bandwidth"] = "false",
        }, WithScaleServices);
        IScaleMonitorManager monitors = host.Host.Services.GetRequiredService<IScaleMonitorManager>();
        ITargetScalerManager targets = host.Host.Services.GetRequiredService<ITargetScalerManager>();

        Assert.Equal(["faascache-compute"], monitors.GetMonitors().Select(m => m.Descriptor.Id).Where(Ours).Select(Prefix));
        Assert.Equal(["faascache-compute"], targets.GetTargetScalers().Select(t => t.TargetScalerDescriptor.FunctionId).Where(Ours).Select(Prefix));
    }

    private static bool Ours(string id) => id.StartsWith("faascache-", StringComparison.Ordinal);

    private static string Prefix(string id) => string.Join('-', id.Split('-').Take(2));

    private static void WithScaleServices(IWebJobsBuilder builder)
    {
        builder.AddFaaSCache();
        builder.Services.AddWebJobsScale(o =>
        {
            o.IsRuntimeScalingEnabled = true;
            o.IsTargetScalingEnabled = true;
            o.ScaleMetricsSampleInterval = TimeSpan.FromSeconds(1);
        });
        builder.Services.AddSingleton<IScaleMetricsRepository, InMemoryScaleMetricsRepository>();
    }

    private static async Task<AggregateScaleStatus> WaitForAsync(IScaleStatusProvider provider, Func<AggregateScaleStatus, bool> done)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            AggregateScaleStatus status = await provider.GetScaleStatusAsync(new ScaleStatusContext { WorkerCount = 1 });
            if (done(status))
            {
                return status;
            }

            if (clock.Elapsed > Patience)
            {
                Assert.Fail($"the host's scale status did not turn as expected within {Patience.TotalSeconds} s; last: {System.Text.Json.JsonSerializer.Serialize(status)}");
            }

            await Task.Delay(250);
        }
    }

    /// <summary>
    /// The SDK's metrics store is pluggable (the Functions host keeps it in Azure tables); this one keeps each monitor's
    /// samples in memory, which is all a single host needs.
    /// </summary>
    private sealed class InMemoryScaleMetricsRepository : IScaleMetricsRepository
    {
        private readonly ConcurrentDictionary<IScaleMonitor, List<ScaleMetrics>> _metrics = new();

        public Task WriteMetricsAsync(IDictionary<IScaleMonitor, ScaleMetrics> monitorMetrics)
        {
            foreach ((IScaleMonitor monitor, ScaleMetrics metrics) in monitorMetrics)
            {
                List<ScaleMetrics> list = _metrics.GetOrAdd(monitor, _ => []);
                lock (list)
                {
                    list.Add(metrics);
                }
            }

            return Task.CompletedTask;
        }

        public Task<IDictionary<IScaleMonitor, IList<ScaleMetrics>>> ReadMetricsAsync(IEnumerable<IScaleMonitor> monitors)
        {
            var result = new Dictionary<IScaleMonitor, IList<ScaleMetrics>>();
            foreach (IScaleMonitor monitor in monitors)
            {
                if (_metrics.TryGetValue(monitor, out List<ScaleMetrics>? list))
                {
                    lock (list)
                    {
                        result[monitor] = [.. list];
                    }
                }
            }

            return Task.FromResult<IDictionary<IScaleMonitor, IList<ScaleMetrics>>>(result);
        }
    }
}
