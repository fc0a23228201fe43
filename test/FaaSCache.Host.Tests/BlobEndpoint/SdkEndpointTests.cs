using System.Diagnostics;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Azure;
using Azure.Storage;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;
using FaaSCache.Testing;
using Xunit;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>The real storage SDKs against the SDK endpoint: a real cachelet, a real Azurite, real HTTP.</summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointTests(AzuriteFixture azurite)
{
    [Theory]
    [InlineData(1)]
    [InlineData(1024)]
    [InlineData((9 * 1024 * 1024) + 7)]
    public async Task whole_and_ranged_downloads_are_byte_identical_and_the_second_read_is_a_local_hit(int size)
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        byte[] content = Bytes(size, seed: size);
        await direct.GetBlobClient("dir/a b+é.bin").UploadAsync(new BinaryData(content));
        BlobClient blob = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("dir/a b+é.bin");

        Assert.Equal(content, (await blob.DownloadContentAsync()).Value.Content.ToArray());
        var target = new MemoryStream();
        // DownloadTo: a first 1 MiB ranged GET, then ranged GETs pinned to its ETag (4 in flight).
        await blob.DownloadToAsync(target, new BlobDownloadToOptions { TransferOptions = new StorageTransferOptions { InitialTransferSize = 1 << 20, MaximumTransferSize = 1 << 20, MaximumConcurrency = 4 } });
        Assert.Equal(content, target.ToArray());
        await using (Stream read = await blob.OpenReadAsync(new BlobOpenReadOptions(allowModifications: false) { BufferSize = 1 << 20 }))
        {
            var streamed = new MemoryStream();
            await read.CopyToAsync(streamed);
            Assert.Equal(content, streamed.ToArray());
        }

        Response<BlobDownloadResult> range = await blob.DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(size / 3, Math.Max(1, size / 2)) });
        Assert.Equal(content.AsSpan(size / 3, Math.Min(Math.Max(1, size / 2), size - (size / 3))).ToArray(), range.Value.Content.ToArray());
        BlobProperties viaEndpoint = (await blob.GetPropertiesAsync()).Value;
        BlobProperties fromStorage = (await direct.GetBlobClient("dir/a b+é.bin").GetPropertiesAsync()).Value;
        Assert.Equal(fromStorage.ETag, viaEndpoint.ETag);
        Assert.Equal(fromStorage.ContentLength, viaEndpoint.ContentLength);
        Assert.Equal(fromStorage.LastModified, viaEndpoint.LastModified);
        Assert.Equal(fromStorage.ContentHash, viaEndpoint.ContentHash);

        string[] sources = [.. rig.ReadSources];
        Assert.Equal("lm", sources[0]);
        Assert.All(sources.Skip(1), s => Assert.Equal("lh", s));
    }

    [Fact]
    public async Task a_miss_is_streamed_on_while_it_fills_the_cache_whole_or_from_the_middle_and_the_next_read_hits()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        byte[] content = Bytes(6 * 1024 * 1024, 77);
        await direct.GetBlobClient("whole.bin").UploadAsync(new BinaryData(content));
        await direct.GetBlobClient("middle.bin").UploadAsync(new BinaryData(content));
        BlobContainerClient via = rig.ViaEndpoint().GetBlobContainerClient(container);

        Assert.Equal(content, (await via.GetBlobClient("whole.bin").DownloadContentAsync()).Value.Content.ToArray());
        Response<BlobDownloadResult> middle = await via.GetBlobClient("middle.bin").DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(3_000_000, 1_500_000) });
        Assert.Equal(content.AsSpan(3_000_000, 1_500_000).ToArray(), middle.Value.Content.ToArray());
        Assert.Equal(content, (await via.GetBlobClient("middle.bin").DownloadContentAsync()).Value.Content.ToArray());

        Assert.Equal(["lm", "lm", "lh"], [.. rig.ReadSources]);
        Assert.True(rig.Cachelet.Contains($"{container}/whole.bin"));
        Assert.Equal(1, rig.Cachelet.GetStatistics($"{container}/middle.bin")!.LocalHits);
    }

    [Fact]
    public async Task conditional_reads_answer_304_and_412_and_a_range_past_the_end_416_as_storage_does()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        await direct.GetBlobClient("c.bin").UploadAsync(new BinaryData(Bytes(100, 1)));
        BlobClient blob = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("c.bin");
        ETag etag = (await blob.GetPropertiesAsync()).Value.ETag;

        RequestFailedException notModified = await Assert.ThrowsAsync<RequestFailedException>(() => blob.GetPropertiesAsync(new BlobRequestConditions { IfNoneMatch = etag }));
        Assert.Equal(304, notModified.Status);
        RequestFailedException failed = await Assert.ThrowsAsync<RequestFailedException>(() => blob.DownloadContentAsync(new BlobDownloadOptions { Conditions = new BlobRequestConditions { IfMatch = new ETag("\"0x8D0000000000000\"") } }));
        Assert.Equal(412, failed.Status);
        Assert.Equal("ConditionNotMet", failed.ErrorCode);
        RequestFailedException past = await Assert.ThrowsAsync<RequestFailedException>(() => blob.DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(100, 10) }));
        Assert.Equal(416, past.Status);
        Assert.Equal("InvalidRange", past.ErrorCode);
        RequestFailedException missing = await Assert.ThrowsAsync<RequestFailedException>(() => blob.GetParentBlobContainerClient().GetBlobClient("nope.bin").DownloadContentAsync());
        Assert.Equal(404, missing.Status);
        Assert.Equal("BlobNotFound", missing.ErrorCode);
        Assert.False(await blob.GetParentBlobContainerClient().GetBlobClient("nope.bin").ExistsAsync());
    }

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
    public async Task a_block_list_naming_the_blocks_of_a_commit_made_through_the_endpoint_resolves_them_there_and_writes_through_the_cache()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlockBlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlockBlobClient("append.bin");
        byte[][] blocks = [Bytes(1000, 21), Bytes(2000, 22), Bytes(3000, 23)];
        string[] ids = [.. Enumerable.Range(0, 3).Select(i => Convert.ToBase64String(Encoding.ASCII.GetBytes($"block-{i:000}")))];
        await via.StageBlockAsync(ids[0], new MemoryStream(blocks[0]));
        await via.StageBlockAsync(ids[1], new MemoryStream(blocks[1]));
        await via.CommitBlockListAsync(ids[..2]);

        // An append as the SDKs do it: the committed ids again (sent as Latest, resolving to committed) and a new block.
        await via.StageBlockAsync(ids[2], new MemoryStream(blocks[2]));
        await via.CommitBlockListAsync(ids);

        byte[] expected = [.. blocks.SelectMany(b => b)];
        Assert.Equal(expected, (await direct.GetBlobClient("append.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(2, rig.Cachelet.GetStatistics($"{container}/append.bin")!.Writes);
        Assert.Equal(["commit", "commit"], [.. rig.Requests.Recent($"{container}/append.bin").Where(r => r.Operation == "commit").Select(r => r.Operation)]);
        Assert.All(rig.Requests.Recent($"{container}/append.bin"), r => Assert.InRange(r.Status, 200, 299));
        rig.ReadSources.Clear();
        Assert.Equal(expected, (await via.DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(["lh"], [.. rig.ReadSources]);

        // Committed with a block left out and one repeated, as storage allows.
        await via.CommitBlockListAsync([ids[2], ids[0], ids[0]]);
        byte[] reordered = [.. blocks[2], .. blocks[0], .. blocks[0]];
        Assert.Equal(reordered, (await direct.GetBlobClient("append.bin").DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task a_block_list_naming_blocks_committed_in_storage_is_forwarded_with_the_blocks_put_here_and_the_cached_copy_dropped()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlockBlobClient straight = direct.GetBlockBlobClient("appended.bin");
        byte[][] blocks = [Bytes(1000, 31), Bytes(2000, 32), Bytes(3000, 33)];
        string[] ids = [.. Enumerable.Range(0, 3).Select(i => Convert.ToBase64String(Encoding.ASCII.GetBytes($"block-{i:000}")))];
        await straight.StageBlockAsync(ids[0], new MemoryStream(blocks[0]));
        await straight.StageBlockAsync(ids[1], new MemoryStream(blocks[1]));
        await straight.CommitBlockListAsync(ids[..2]);
        BlockBlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlockBlobClient("appended.bin");
        byte[] before = [.. blocks[0], .. blocks[1]];
        Assert.Equal(before, (await via.DownloadContentAsync()).Value.Content.ToArray());
        Assert.True(rig.Cachelet.Contains($"{container}/appended.bin"));

        await via.StageBlockAsync(ids[2], new MemoryStream(blocks[2]));
        Response<BlobContentInfo> committed = await via.CommitBlockListAsync(ids);

        byte[] expected = [.. blocks.SelectMany(b => b)];
        Assert.Equal(expected, (await straight.DownloadContentAsync()).Value.Content.ToArray());
        BlockList list = (await straight.GetBlockListAsync(BlockListTypes.Committed)).Value;
        Assert.Equal(ids, list.CommittedBlocks.Select(b => b.Name));
        Assert.Equal((await straight.GetPropertiesAsync()).Value.ETag, committed.Value.ETag);
        Assert.False(rig.Cachelet.Contains($"{container}/appended.bin"));
        Assert.Equal(expected, (await via.DownloadContentAsync()).Value.Content.ToArray());

        // A list naming a block no one put: storage's own refusal.
        RequestFailedException refused = await Assert.ThrowsAsync<RequestFailedException>(() => via.CommitBlockListAsync([ids[0], Convert.ToBase64String("never-put"u8.ToArray())]));
        Assert.Equal(400, refused.Status);
        Assert.Equal("InvalidBlockList", refused.ErrorCode);
        Assert.Equal(expected, (await straight.DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task the_python_storage_sdk_commits_a_list_naming_committed_blocks_through_the_endpoint()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);

        string printed = await rig.RunSdkCheckAsync("sdk-check.py", "committed", container);

        byte[] expected = [.. Enumerable.Repeat((byte)'a', 1000), .. Enumerable.Repeat((byte)'b', 2000), .. Enumerable.Repeat((byte)'c', 3000)];
        Assert.Equal(expected, (await direct.GetBlobClient("py/committed.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Contains($"sha256: {Convert.ToHexStringLower(SHA256.HashData(expected))}", printed, StringComparison.Ordinal);
        Assert.Equal(2, rig.Cachelet.GetStatistics($"{container}/py/committed.bin")!.Writes);
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
    public async Task a_request_signed_with_another_key_or_not_at_all_is_refused_as_storage_refuses_it()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        await direct.GetBlobClient("s.bin").UploadAsync(new BinaryData(Bytes(10, 5)));
        string wrongKey = Convert.ToBase64String(Encoding.ASCII.GetBytes("not the account key, 64 bytes long..............................."));
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05);
        options.Retry.MaxRetries = 0;
        var forged = new BlobClient(new Uri($"{rig.Address.BlobEndpoint}/{container}/s.bin"), new StorageSharedKeyCredential(AzuriteServer.AccountName, wrongKey), options);

        RequestFailedException refused = await Assert.ThrowsAsync<RequestFailedException>(() => forged.DownloadContentAsync());
        Assert.Equal(403, refused.Status);
        Assert.Equal("AuthenticationFailed", refused.ErrorCode);
        RequestFailedException write = await Assert.ThrowsAsync<RequestFailedException>(() => forged.UploadAsync(new BinaryData(Bytes(3, 6)), overwrite: true));
        Assert.Equal(403, write.Status);
        Assert.Equal(Bytes(10, 5), (await direct.GetBlobClient("s.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.False(rig.Cachelet.Contains($"{container}/s.bin"));

        // A SAS made with the account key is served; storage's own answer would be the same.
        Uri sas = direct.GetBlobClient("s.bin").GenerateSasUri(Azure.Storage.Sas.BlobSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1));
        var viaSas = new BlobClient(new Uri($"{rig.Address.BlobEndpoint}/{container}/s.bin{sas.Query}"), options);
        Assert.Equal(Bytes(10, 5), (await viaSas.DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task a_listing_is_forwarded_and_identical_to_storages()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        foreach (string name in new[] { "x/1.bin", "x/2 two.bin", "y.bin" })
        {
            await direct.GetBlobClient(name).UploadAsync(new BinaryData(Bytes(7, name.Length)));
        }

        var fromStorage = new List<string>();
        await foreach (BlobItem item in direct.GetBlobsAsync())
        {
            fromStorage.Add($"{item.Name} {item.Properties.ETag} {item.Properties.ContentLength}");
        }

        var viaEndpoint = new List<string>();
        await foreach (BlobItem item in rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobsAsync())
        {
            viaEndpoint.Add($"{item.Name} {item.Properties.ETag} {item.Properties.ContentLength}");
        }

        Assert.Equal(fromStorage, viaEndpoint);
        Assert.Equal(3, viaEndpoint.Count);
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

    [Theory]
    [InlineData(1024)]
    [InlineData((9 * 1024 * 1024) + 7)]
    public async Task the_node_storage_sdks_whole_and_ranged_downloads_are_byte_identical_to_storages_and_hit_after_the_first(int size)
    {
        byte[] content = Bytes(size, seed: size + 1);
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (_, string container) = await NewContainerAsync(rig, ("node/a b+é.bin", content));
        int offset = size / 3;
        int count = Math.Min(Math.Max(1, size / 2), size - offset);

        // The script compares each download (bytes and headers) with storage's own and exits non-zero on a difference.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "downloads", container, "node/a b+é.bin", $"{offset}", $"{count}");

        string whole = Convert.ToHexStringLower(SHA256.HashData(content));
        Assert.Contains($"downloads whole {size} {whole}", printed, StringComparison.Ordinal);
        Assert.Contains($"downloads chunked {size} {whole}", printed, StringComparison.Ordinal);
        Assert.Contains($"downloads range bytes {offset}-{offset + count - 1}/{size} {count} {Convert.ToHexStringLower(SHA256.HashData(content.AsSpan(offset, count)))}", printed, StringComparison.Ordinal);
        // Served by the cache: the first read a local miss, every later one (the HEAD, the ranges) a local hit.
        string?[] sources = [.. rig.Requests.Recent($"{container}/node/a b+é.bin").Where(r => r.Operation == "read").Select(r => r.Source)];
        Assert.True(sources.Length >= 4, string.Join(",", sources));
        Assert.Equal("lm", sources[0]);
        Assert.All(sources.Skip(1), s => Assert.Equal("lh", s));
    }

    [Fact]
    public async Task the_node_storage_sdk_gets_304_and_412_from_the_endpoint_as_from_storage()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (_, string container) = await NewContainerAsync(rig, ("node/c.bin", Bytes(100, 11)));

        // Each conditional call is made through the endpoint and straight to storage; the script exits non-zero unless
        // the SDK surfaces the same status and error code from both.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "conditions", container, "node/c.bin");

        Assert.Contains("conditions download-if-none-match 304", printed, StringComparison.Ordinal);
        Assert.Contains("conditions properties-if-none-match 304", printed, StringComparison.Ordinal);
        Assert.Contains("conditions download-if-match 412 ConditionNotMet", printed, StringComparison.Ordinal);
        Assert.Contains("conditions properties-if-match 412", printed, StringComparison.Ordinal);
        Assert.Contains(rig.Requests.Recent($"{container}/node/c.bin"), r => r is { Operation: "read", Status: 304 });
        Assert.Contains(rig.Requests.Recent($"{container}/node/c.bin"), r => r is { Operation: "read", Status: 412 });
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

    [Fact]
    public async Task the_node_storage_sdk_with_another_account_key_is_refused_as_storage_refuses_it()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig, ("node/s.bin", Bytes(10, 12)));

        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "forged", container, "node/s.bin");

        Assert.Contains("forged read 403 AuthenticationFailed", printed, StringComparison.Ordinal);
        Assert.Contains("forged write 403 AuthenticationFailed", printed, StringComparison.Ordinal);
        Assert.Equal(Bytes(10, 12), (await direct.GetBlobClient("node/s.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.False(rig.Cachelet.Contains($"{container}/node/s.bin"));
    }

    [Fact]
    public async Task the_node_storage_sdks_listing_through_the_endpoint_is_identical_to_storages()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        string[] names = ["x/1.bin", "x/2 two.bin", "y.bin", "z/é.bin", "zz.json"];
        foreach (string name in names)
        {
            await direct.GetBlobClient(name).UploadAsync(new BinaryData(Bytes(7 + name.Length, name.Length)));
        }

        // Listed whole and in pages of 2 (continuation markers) through the endpoint and straight from storage.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "list", container);

        Assert.Contains($"list {names.Length} {string.Join(',', names)}", printed, StringComparison.Ordinal);
        Assert.All(rig.Requests.Recent(), r => Assert.Equal("forward", r.Operation));
    }

    /// <summary>A new container in Azurite, with <paramref name="blobs"/> uploaded straight to it.</summary>
    private static async Task<(BlobContainerClient Direct, string Name)> NewContainerAsync(SdkEndpointRig rig, params (string Name, byte[] Content)[] blobs)
    {
        BlobContainerClient container = await rig.Azurite.CreateContainerAsync("sdk");
        foreach ((string name, byte[] content) in blobs)
        {
            await container.GetBlobClient(name).UploadAsync(new BinaryData(content));
        }

        return (container, container.Name);
    }

    private static byte[] Bytes(int size, int seed)
    {
        var content = new byte[size];
        new Random(seed).NextBytes(content);
        return content;
    }
}
