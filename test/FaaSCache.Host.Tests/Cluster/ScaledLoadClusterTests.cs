using Azure.Storage.Blobs.Models;
using FaaSCache.Host.Admin;

namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// §4's bandwidth-scaled loads across real host processes: four instances each download a distinct byte range of one
/// blob version and stream it into the requester's map over gRPC; the object is exposed only once complete and checked.
/// </summary>
[Trait("Category", "Cluster")]
public sealed class ScaledLoadClusterTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private const int Size = 64 << 20;

    [Fact]
    public async Task A_64_MB_miss_loaded_by_four_instances_in_ranges_is_byte_identical_to_the_blob_through_the_worker()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "local", output, count: 4);
        ClusterInstance requester = cluster[0];
        (string name, string sha256) = await UploadAsync(cluster, requester, "scaled");

        HostCacheRead read = await ScaledReadAsync(requester, cluster.App.Key(name), 4);
        output.WriteLine($"scaled load of {Size} B by {read.Instances} instances in {read.Seconds:0.000} s, checked by {read.Checksum}");

        Assert.Equal(("lm", (long)Size, 4, 0, "xxh3"), (read.Source, read.Bytes, read.Instances, read.TakenBack, read.Checksum));
        // The function reads the assembled map (a local hit): the bytes it hashes are the blob's.
        ClusterRead viaWorker = await cluster.ReadAsync(requester, name);
        Assert.Equal(("lh", sha256), (viaWorker.Source, viaWorker.Sha256));
        HostStatus status = await HostCluster.StatusAsync(requester);
        Assert.Equal(Size, status.Count.BytesFetched + status.Count.BytesFromPeers);
        Assert.True(status.Count.BytesFromPeers >= Size / 2, $"the helpers delivered {status.Count.BytesFromPeers} of {Size} bytes");
        foreach (ClusterInstance helper in cluster.Instances.Skip(1))
        {
            Assert.Equal(0, (await HostCluster.StatusAsync(helper)).SharedMemory.Maps);
        }
    }

    [Fact]
    public async Task An_instance_killed_as_a_ranged_load_starts_leaves_its_range_to_the_requester_and_the_object_is_still_whole()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "local", output, count: 4);
        ClusterInstance requester = cluster[0], victim = cluster[2];
        (string name, string sha256) = await UploadAsync(cluster, requester, "killed");

        // The requester creates its map before it hands out the ranges: that is when the helper dies (still on the ring,
        // which keeps a member for its failure timeout), so its range can only come from the requester's own GET.
        var created = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Directory.CreateDirectory(requester.MapDirectory);
        using var watcher = new FileSystemWatcher(requester.MapDirectory);
        watcher.Created += (_, _) =>
        {
            victim.Host.Kill();
            created.TrySetResult();
        };
        watcher.EnableRaisingEvents = true;

        HostCacheRead read = await ScaledReadAsync(requester, cluster.App.Key(name), 4);
        await created.Task.WaitAsync(TimeSpan.FromSeconds(30));
        output.WriteLine($"scaled load with {victim.Id} killed: {read.Instances} instance(s), {read.TakenBack} range(s) taken back, {read.Seconds:0.000} s");

        Assert.True(victim.Host.HasExited);
        Assert.Equal(1, read.TakenBack);
        Assert.Equal(((long)Size, "xxh3"), (read.Bytes, read.Checksum));
        ClusterRead viaWorker = await cluster.ReadAsync(requester, name);
        Assert.Equal(sha256, viaWorker.Sha256);
        Assert.Equal(1, (await HostCluster.StatusAsync(requester)).SharedMemory.Maps);
    }

    private static async Task<(string Name, string Sha256)> UploadAsync(HostCluster cluster, ClusterInstance requester, string prefix)
    {
        string name = cluster.NameOwnedBy(requester.Id, prefix);
        byte[] content = RandomNumberGenerator.GetBytes(Size);
        BlobContainerClient container = cluster.Blobs.GetBlobContainerClient(cluster.App.Container);
        await container.CreateIfNotExistsAsync();
        // As the cachelet's own uploads do: the whole-object XxHash3 in the metadata, which the assembled object must match.
        await container.GetBlobClient(name).UploadAsync(new BinaryData(content), new BlobUploadOptions
        {
            Metadata = new Dictionary<string, string> { [IBlobStore.XxHash3Metadata] = BlobChecksum.Format(BlobChecksum.Of(content)) },
        });
        return (name, Convert.ToHexStringLower(SHA256.HashData(content)));
    }

    private static async Task<HostCacheRead> ScaledReadAsync(ClusterInstance instance, string key, int instances)
    {
        using HttpResponseMessage response = await instance.Host.Http.PostAsync(new Uri($"admin/cache/read?key={Uri.EscapeDataString(key)}&instances={instances}", UriKind.Relative), null);
        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"POST /admin/cache/read answered {(int)response.StatusCode}: {body}");
        return (await response.Content.ReadFromJsonAsync<HostCacheRead>())!;
    }
}
