using System.Net.Sockets;
using Azure;
using Azure.Storage;
using Azure.Storage.Blobs.Models;
using static FaaSCache.Host.Tests.BlobEndpoint.SdkEndpointBlobs;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Writes and deletes through the SDK endpoint with the real .NET, Python and Node storage SDKs: single-shot and block
/// uploads land in storage and in the cache, create-only refuses an existing blob, metadata is kept, a delete removes the
/// blob from both, and a body cut short writes nothing.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointWriteTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task single_shot_and_block_uploads_land_in_storage_and_in_the_cache_and_create_only_refuses_an_existing_blob()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlobContainerClient via = rig.ViaEndpoint().GetBlobContainerClient(container);
        byte[] small = Bytes(5000, 2);
        byte[] large = Bytes((3 * 1024 * 1024) + 11, 3);

        await via.GetBlobClient("single.bin").UploadAsync(new BinaryData(small));
        // Blocks of 1 MiB: Put Block x4 + Put Block List.
        await via.GetBlobClient("blocks.bin").UploadAsync(new MemoryStream(large), new BlobUploadOptions { TransferOptions = new StorageTransferOptions { InitialTransferSize = 1 << 20, MaximumTransferSize = 1 << 20 } });

        Assert.Equal(small, (await direct.GetBlobClient("single.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(large, (await direct.GetBlobClient("blocks.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.True(rig.Cachelet.Contains($"{container}/single.bin"));
        Assert.True(rig.Cachelet.Contains($"{container}/blocks.bin"));
        rig.ReadSources.Clear();
        Assert.Equal(large, (await via.GetBlobClient("blocks.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(["lh"], [.. rig.ReadSources]);

        // Upload(stream) is create-only (If-None-Match: *).
        RequestFailedException exists = await Assert.ThrowsAsync<RequestFailedException>(() => via.GetBlobClient("single.bin").UploadAsync(new MemoryStream(large)));
        Assert.Equal(409, exists.Status);
        Assert.Equal("BlobAlreadyExists", exists.ErrorCode);
        Assert.Equal(small, (await direct.GetBlobClient("single.bin").DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task a_write_with_metadata_goes_to_storage_and_the_next_read_serves_it_with_its_metadata()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("m.json");
        await via.UploadAsync(new BinaryData("{}"u8.ToArray()));
        Assert.Equal("{}", (await via.DownloadContentAsync()).Value.Content.ToString());

        await via.UploadAsync(new BinaryData("{\"a\":1}"u8.ToArray()), new BlobUploadOptions
        {
            Metadata = new Dictionary<string, string> { ["Owner"] = "team-a" },
            HttpHeaders = new BlobHttpHeaders { ContentType = "application/json" },
        });

        BlobProperties stored = (await direct.GetBlobClient("m.json").GetPropertiesAsync()).Value;
        Assert.Equal("application/json", stored.ContentType);
        Response<BlobDownloadResult> read = await via.DownloadContentAsync();
        Assert.Equal("{\"a\":1}", read.Value.Content.ToString());
        Assert.Equal("application/json", read.Value.Details.ContentType);
        Assert.Equal("team-a", read.Value.Details.Metadata["Owner"]);
        Assert.Equal(stored.ETag, read.Value.Details.ETag);
    }

    [Fact]
    public async Task a_delete_removes_the_blob_from_storage_and_the_cache()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("d.bin");
        await via.UploadAsync(new BinaryData(Bytes(10, 4)));
        Assert.True(rig.Cachelet.Contains($"{container}/d.bin"));

        await via.DeleteAsync();

        Assert.False(await direct.GetBlobClient("d.bin").ExistsAsync());
        Assert.False(rig.Cachelet.Contains($"{container}/d.bin"));
        RequestFailedException gone = await Assert.ThrowsAsync<RequestFailedException>(() => via.DownloadContentAsync());
        Assert.Equal("BlobNotFound", gone.ErrorCode);
        Assert.False(await via.DeleteIfExistsAsync());
    }

    [Fact]
    public async Task a_body_cut_short_of_its_content_length_writes_nothing()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        // A signed Put Blob of 100 bytes whose connection closes after 40: the signature is over the headers only.
        var context = new Microsoft.AspNetCore.Http.DefaultHttpContext();
        string date = DateTimeOffset.UtcNow.ToString("R");
        string path = $"/{AzuriteServer.AccountName}/{container}/cut.bin";
        context.Request.Method = "PUT";
        context.Request.Headers["Content-Length"] = "100";
        context.Request.Headers["x-ms-blob-type"] = "BlockBlob";
        context.Request.Headers["x-ms-date"] = date;
        context.Request.Headers["x-ms-version"] = "2025-11-05";
        context.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpRequestFeature>()!.RawTarget = path;
        var signer = new FaaSCache.Host.BlobEndpoint.StorageRequestAuthenticator(AzuriteServer.AccountName, AzuriteServer.AccountKey);
        string signature = signer.Sign(signer.StringToSignForSharedKey(context.Request));
        using (var client = new TcpClient())
        {
            await client.ConnectAsync("127.0.0.1", rig.Address.Port);
            NetworkStream stream = client.GetStream();
            string head = $"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{rig.Address.Port}\r\nContent-Length: 100\r\nx-ms-blob-type: BlockBlob\r\nx-ms-date: {date}\r\nx-ms-version: 2025-11-05\r\nAuthorization: SharedKey {AzuriteServer.AccountName}:{signature}\r\n\r\n";
            await stream.WriteAsync(Encoding.ASCII.GetBytes(head));
            await stream.WriteAsync(Bytes(40, 9));
            await stream.FlushAsync();
            client.Client.Shutdown(SocketShutdown.Send);
            var buffer = new byte[4096];
            var sw = Stopwatch.StartNew();
            try
            {
                while (sw.Elapsed < TimeSpan.FromSeconds(10) && await stream.ReadAsync(buffer) > 0)
                {
                }
            }
            catch (IOException)
            {
                // The endpoint may answer 400 and reset the connection: either way the upload is over.
            }
        }

        Assert.False(await direct.GetBlobClient("cut.bin").ExistsAsync());
        Assert.False(rig.Cachelet.Contains($"{container}/cut.bin"));
    }

    [Fact]
    public async Task the_python_storage_sdk_uploads_in_blocks_and_downloads_in_chunks_through_the_endpoint()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);

        string printed = await rig.RunSdkCheckAsync("sdk-check.py", "blocks", container);

        Assert.Contains("exists: BlobAlreadyExists", printed, StringComparison.Ordinal);
        byte[] expected = [.. Enumerable.Repeat(Enumerable.Range(0, 256).Select(i => (byte)i), 5 * 4096).SelectMany(b => b), .. "tail"u8.ToArray()];
        Assert.Equal(expected, (await direct.GetBlobClient("py/up.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal("hello from python", (await direct.GetBlobClient("py/small.txt").DownloadContentAsync()).Value.Content.ToString());
        Assert.True(rig.Cachelet.Contains($"{container}/py/up.bin"));
        // Written through the cache, then read (whole in chunks, and a range) from it: every read a local hit.
        FaaSCache.Caching.ObjectStatistics stats = rig.Cachelet.GetStatistics($"{container}/py/up.bin")!;
        Assert.Equal(1, stats.Writes);
        Assert.True(stats.LocalHits >= 6, $"local hits {stats.LocalHits}");
        Assert.Equal(0, stats.LocalMisses);
    }

    [Fact]
    public async Task the_node_storage_sdks_single_shot_and_block_uploads_land_in_storage_and_are_written_through_the_cache_once()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        // The cache's Written event is what fires a blob trigger (the host's BlobTriggerService): once per write.
        var written = new System.Collections.Concurrent.ConcurrentQueue<string>();
        rig.Cachelet.Written += (_, e) => written.Enqueue(e.Key);

        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "uploads", container, "node/");

        foreach ((string name, int size) in new[] { ("node/small.bin", 5000), ("node/large.bin", (3 * 1024 * 1024) + 11) })
        {
            byte[] stored = (await direct.GetBlobClient(name).DownloadContentAsync()).Value.Content.ToArray();
            Assert.Equal(size, stored.Length);
            Assert.Contains($"uploads {name} {size} {Convert.ToHexStringLower(SHA256.HashData(stored))}", printed, StringComparison.Ordinal);
            Assert.True(rig.Cachelet.Contains($"{container}/{name}"));
            Assert.Equal(1, rig.Cachelet.GetStatistics($"{container}/{name}")!.Writes);
            Assert.Single(written, k => k == $"{container}/{name}");
        }

        // uploadData: one Put Blob at or below maxSingleShotSize, Put Block x4 + Put Block List above it.
        Assert.Equal(["write"], [.. rig.Requests.Recent($"{container}/node/small.bin").Where(r => r.Operation != "read").Select(r => r.Operation)]);
        Assert.Equal(["block", "block", "block", "block", "commit"], [.. rig.Requests.Recent($"{container}/node/large.bin").Where(r => r.Operation != "read").Select(r => r.Operation)]);
        Assert.All(rig.Requests.Recent().Where(r => r.Operation is "write" or "block" or "commit"), r => Assert.Equal(201, r.Status));
        // Read back through the endpoint from the cache.
        Assert.All(rig.Requests.Recent().Where(r => r.Operation == "read"), r => Assert.Equal("lh", r.Source));
    }
}
