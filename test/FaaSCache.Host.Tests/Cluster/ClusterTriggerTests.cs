namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// Blob triggers fire exactly once per write, under every preset, with three instances: a write through a non-owner
/// (committed on the owner, or on the writer under the local presets) and one through the owner each fire
/// <c>OnEvent</c> once across the cluster, whether the cache event or a poll saw the write first.
/// </summary>
[Trait("Category", "Cluster")]
public sealed class ClusterTriggerTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(5);

    [Theory]
    [EveryPreset]
    public async Task Every_write_fires_its_blob_trigger_exactly_once_across_the_cluster(string preset)
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, preset, output);
        var emitted = new List<string>();
        for (int i = 0; i < cluster.Instances.Count; i++)
        {
            ClusterInstance writer = cluster[i];
            string owner = cluster[(i + 1) % cluster.Instances.Count].Id;
            string viaNonOwner = NameOwnedBy(cluster, owner, $"via-{writer.Id}");
            string viaOwner = NameOwnedBy(cluster, writer.Id, $"own-{writer.Id}");
            foreach (string name in new[] { viaNonOwner, viaOwner })
            {
                using HttpResponseMessage response = await writer.Host.Http.PostAsync(
                    $"api/Emit?name={Uri.EscapeDataString(name)}", new ByteArrayContent([1, 2, 3]));
                Assert.True(response.IsSuccessStatusCode, $"Emit {name} on {writer.Id}: {(int)response.StatusCode}");
                emitted.Add(name);
            }
        }

        Dictionary<string, List<(string Instance, InvocationRecord Run)>> fired = await WaitForEveryEventAsync(cluster, emitted);
        await Task.Delay(Settle); // more polls: a second firing would show up now
        fired = await FiredAsync(cluster);

        foreach (string name in emitted)
        {
            List<(string Instance, InvocationRecord Run)> runs = fired.GetValueOrDefault(cluster.App.Events + "/" + name) ?? [];
            Assert.True(runs.Count == 1, $"{preset}: {name} fired {runs.Count} times: {string.Join("; ", runs.Select(r => $"{r.Instance} {r.Run.Trigger} {r.Run.Status}"))}");
            Assert.Equal("succeeded", runs[0].Run.Status);
        }
    }

    private static string NameOwnedBy(HostCluster cluster, string owner, string prefix)
        => Enumerable.Range(0, 10_000).Select(i => $"{prefix}-{i.ToString(CultureInfo.InvariantCulture)}")
            .First(n => cluster.OwnerOf($"{cluster.App.Events}/{n}") == owner);

    private static async Task<Dictionary<string, List<(string Instance, InvocationRecord Run)>>> WaitForEveryEventAsync(HostCluster cluster, List<string> names)
    {
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        while (true)
        {
            Dictionary<string, List<(string, InvocationRecord)>> fired = await FiredAsync(cluster);
            if (names.All(n => fired.ContainsKey(cluster.App.Events + "/" + n)))
            {
                return fired;
            }

            await Task.Delay(200, deadline.Token);
        }
    }

    private static async Task<Dictionary<string, List<(string Instance, InvocationRecord Run)>>> FiredAsync(HostCluster cluster)
    {
        var fired = new Dictionary<string, List<(string, InvocationRecord)>>(StringComparer.Ordinal);
        foreach (ClusterInstance instance in cluster.Instances)
        {
            foreach (InvocationRecord run in await instance.Host.GetInvocationsAsync("OnEvent"))
            {
                string key = run.Input("event").Key;
                (fired.TryGetValue(key, out var list) ? list : fired[key] = []).Add((instance.Id, run));
            }
        }

        return fired;
    }
}
