using System.Diagnostics;
using System.Net.Sockets;
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
        const string script = """
            import sys, hashlib
            from azure.storage.blob import BlobServiceClient
            from azure.core.exceptions import ResourceExistsError
            conn, container = sys.argv[1], sys.argv[2]
            # 1 MiB single-shot and chunk limits: a 5 MiB upload is Put Block x5 + Put Block List, a download 5 ranged GETs.
            svc = BlobServiceClient.from_connection_string(conn, max_single_put_size=1 << 20, max_block_size=1 << 20,
                                                           max_single_get_size=1 << 20, max_chunk_get_size=1 << 20)
            c = svc.get_container_client(container)
            data = bytes(range(256)) * (5 * 4096) + b"tail"
            c.upload_blob("py/up.bin", data)
            small = b"hello from python"
            c.upload_blob("py/small.txt", small)
            b = c.get_blob_client("py/up.bin")
            assert b.download_blob().readall() == data, "whole download differs"
            assert b.download_blob(offset=1000, length=5000).readall() == data[1000:6000], "ranged download differs"
            assert c.get_blob_client("py/small.txt").download_blob().readall() == small
            try:
                c.upload_blob("py/small.txt", b"again")
                raise SystemExit("create-only upload of an existing blob succeeded")
            except ResourceExistsError as e:
                print("exists:", e.error_code)
            print("sha256:", hashlib.sha256(data).hexdigest())
            """;
        string file = Path.Combine(Path.GetTempPath(), $"sdk-endpoint-{Guid.NewGuid():N}.py");
        await File.WriteAllTextAsync(file, script);
        try
        {
            var start = new ProcessStartInfo("/usr/bin/python3") { RedirectStandardOutput = true, RedirectStandardError = true };
            start.ArgumentList.Add(file);
            start.ArgumentList.Add(rig.EndpointConnectionString);
            start.ArgumentList.Add(container);
            using Process python = Process.Start(start)!;
            Task<string> stdout = python.StandardOutput.ReadToEndAsync();
            Task<string> stderr = python.StandardError.ReadToEndAsync();
            await python.WaitForExitAsync().WaitAsync(TimeSpan.FromMinutes(2));
            Assert.True(python.ExitCode == 0, $"python exited {python.ExitCode}: {await stdout}{await stderr}");
            Assert.Contains("exists: BlobAlreadyExists", await stdout, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(file);
        }

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

    private static async Task<(BlobContainerClient Direct, string Name)> NewContainerAsync(SdkEndpointRig rig)
    {
        BlobContainerClient container = await rig.Azurite.CreateContainerAsync("sdk");
        return (container, container.Name);
    }

    private static byte[] Bytes(int size, int seed)
    {
        var content = new byte[size];
        new Random(seed).NextBytes(content);
        return content;
    }
}
