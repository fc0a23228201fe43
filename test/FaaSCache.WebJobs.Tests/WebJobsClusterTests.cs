namespace FaaSCache.WebJobs.Tests;

/// <summary>
/// The WebJobs face is a whole cachelet: two WebJobs hosts of one app join one membership, serve each other through
/// the peer service on their own ports, and apply the app's consistency preset across them, as FaaSCache hosts do.
/// </summary>
[Trait("Category", "Integration")]
public sealed class WebJobsClusterTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task Two_webjobs_hosts_of_one_app_form_one_cache_with_remote_hits_and_writes_through_the_owner()
    {
        string app = "webjobs-cluster-" + Guid.NewGuid().ToString("N")[..8];
        var settings = new Dictionary<string, string?>
        {
            ["FaaSCache:AppName"] = app,
            ["AzureWebJobs:extensions:faasCache:consistency"] = "owner",
            ["AzureWebJobs:extensions:faasCache:membership:heartbeatInterval"] = "00:00:01",
            ["AzureWebJobs:extensions:faasCache:membership:failureTimeout"] = "00:00:05",
        };
        await using CacheHost a = await CacheHost.StartAsync(azurite, settings);
        await using CacheHost b = await CacheHost.StartAsync(azurite, settings);
        IOwnerLocator ring = a.Host.Services.GetRequiredService<IOwnerLocator>();
        using (var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
        {
            while (ring.Current.Members.Count < 2 || b.Host.Services.GetRequiredService<IOwnerLocator>().Current.Members.Count < 2)
            {
                await Task.Delay(100, deadline.Token);
            }
        }

        string bId = b.Cachelet.InstanceId;
        var container = await azurite.CreateContainerAsync("webjobs-cluster");
        string key = Enumerable.Range(0, 10_000).Select(i => $"{container.Name}/k{i}").First(k => ring.GetOwner(k) == bId);
        await container.GetBlobClient(key[(container.Name.Length + 1)..]).UploadAsync(new BinaryData(new byte[4096]));

        using (ObjectLease first = await a.Cachelet.ReadAsync(key))
        {
            Assert.Equal(ReadSource.RemoteMiss, first.Source);
        }

        Assert.True(b.Cachelet.Contains(key), "the owner kept the object it fetched for the other host");
        WriteReceipt written = await a.Cachelet.WriteAsync(key, new byte[] { 7, 7, 7 });
        Assert.Equal(1, b.Cachelet.GetStatistics(key)!.PeerWrites);
        using ObjectLease fromOwner = await b.Cachelet.ReadAsync(key);
        Assert.Equal([7, 7, 7], fromOwner.Span.ToArray());
        Assert.Equal(written.Version, fromOwner.Version);
    }
}
