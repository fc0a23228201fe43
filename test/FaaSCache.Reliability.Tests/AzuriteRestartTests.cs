using Azure;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// <see cref="AzuriteServer.RestartAsync"/>, which the storage-restart scenario relies on: a SIGTERM stop refuses
/// connections, and the server started again on the same port and folder still holds every blob written before.
/// Each test runs an Azurite of its own (the collection's is shared by the other scenarios).
/// </summary>
[Trait("Category", "Reliability")]
public sealed class AzuriteRestartTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Restarting_Azurite_keeps_every_blob_written_before_on_the_same_port()
    {
        await using AzuriteServer azurite = await AzuriteServer.StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("restart");
        var written = new Dictionary<string, byte[]>(StringComparer.Ordinal);
        int[] sizes = [1, 100, 4096, 65_536, 1 << 20, 4 << 20];
        for (int i = 0; i < sizes.Length; i++)
        {
            // Small bodies and large extents alike are on disk in the --location folder.
            byte[] body = new byte[sizes[i]];
            Random.Shared.NextBytes(body);
            written[$"blob-{i}"] = body;
            await container.GetBlobClient($"blob-{i}").UploadAsync(new BinaryData(body));
        }

        // Written right before the stop: within Azurite's 5 s metadata autosave, so only the SIGTERM flush keeps it.
        await container.GetBlobClient("blob-last").UploadAsync(new BinaryData("last"u8.ToArray()));
        written["blob-last"] = "last"u8.ToArray();
        int port = azurite.Port, pid = azurite.ProcessId;

        AzuriteStop stop = await azurite.StopAsync();
        output.WriteLine(stop.ToString());
        Assert.False(stop.Killed, stop.ToString());
        Assert.False(azurite.IsRunning);
        Assert.False(await TcpPorts.IsAcceptingAsync(port, TimeSpan.FromSeconds(5)));
        BlobClient unreachable = azurite.CreateServiceClient(o => o.Retry.MaxRetries = 0).GetBlobContainerClient(container.Name).GetBlobClient("blob-0");
        RequestFailedException refused = await Assert.ThrowsAsync<RequestFailedException>(() => unreachable.DownloadContentAsync());
        Assert.Contains("refused", refused.ToString(), StringComparison.OrdinalIgnoreCase);

        await azurite.StartAgainAsync();
        Assert.True(azurite.IsRunning);
        Assert.Equal(port, azurite.Port);
        Assert.NotEqual(pid, azurite.ProcessId);
        List<string> names = [];
        await foreach (var item in container.GetBlobsAsync())
        {
            names.Add(item.Name);
        }

        Assert.Equal(written.Keys.Order(StringComparer.Ordinal), names.Order(StringComparer.Ordinal));
        foreach ((string name, byte[] body) in written)
        {
            BinaryData content = (await container.GetBlobClient(name).DownloadContentAsync()).Value.Content;
            Assert.True(body.AsSpan().SequenceEqual(content.ToMemory().Span), $"{name} differs after the restart");
        }

        // And it takes new writes, twice over: a second restart keeps those too.
        await container.GetBlobClient("after").UploadAsync(new BinaryData("after"u8.ToArray()));
        output.WriteLine((await azurite.RestartAsync()).ToString());
        Assert.Equal("after", (await container.GetBlobClient("after").DownloadContentAsync()).Value.Content.ToString());
        Assert.Equal(written.Count + 1, await CountAsync(container));
    }

    [Fact]
    public async Task Starting_Azurite_again_while_it_runs_or_stopping_it_twice_is_refused_with_a_clear_error()
    {
        await using AzuriteServer azurite = await AzuriteServer.StartAsync();
        InvalidOperationException running = await Assert.ThrowsAsync<InvalidOperationException>(() => azurite.StartAgainAsync());
        Assert.Contains("still running", running.Message, StringComparison.Ordinal);
        await azurite.StopAsync();
        InvalidOperationException stopped = await Assert.ThrowsAsync<InvalidOperationException>(() => azurite.StopAsync());
        Assert.Contains("not running", stopped.Message, StringComparison.Ordinal);
    }

    private static async Task<int> CountAsync(BlobContainerClient container)
    {
        int count = 0;
        await foreach (var unused in container.GetBlobsAsync())
        {
            count++;
        }

        return count;
    }
}
