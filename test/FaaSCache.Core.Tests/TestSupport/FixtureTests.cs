using System.Net.Sockets;
using Azure.Core;
using Azure.Core.Pipeline;

namespace FaaSCache.Core.Tests.TestSupport;

/// <summary>Proves the shared fixtures start real servers and always clean up.</summary>
[Trait("Category", "Integration")]
public sealed class FixtureTests
{
    [Fact]
    public async Task Azurite_starts_round_trips_a_blob_with_the_pinned_version_and_dispose_frees_everything()
    {
        var server = await AzuriteServer.StartAsync();
        var port = server.Port;
        var pid = server.ProcessId;
        var dataDirectory = server.DataDirectory;
        try
        {
            Assert.Equal(new Uri($"http://127.0.0.1:{port}/devstoreaccount1"), server.BlobEndpoint);
            Assert.Contains($"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1", server.ConnectionString, StringComparison.Ordinal);
            Assert.True(Directory.Exists(dataDirectory));

            var versions = new VersionCapture();
            var client = server.CreateServiceClient(o => o.AddPolicy(versions, HttpPipelinePosition.PerCall));
            var container = await server.CreateContainerAsync("Fixture Tests_");
            Assert.StartsWith("fixture-tests-", container.Name, StringComparison.Ordinal);

            var blob = client.GetBlobContainerClient(container.Name).GetBlobClient("a/b.bin");
            var payload = Encoding.UTF8.GetBytes("hello azurite");
            await blob.UploadAsync(BinaryData.FromBytes(payload));
            var download = await blob.DownloadContentAsync();

            Assert.Equal(payload, download.Value.Content.ToArray());
            Assert.NotEmpty(versions.Seen);
            Assert.All(versions.Seen, v => Assert.Equal("2025-11-05", v));

            Assert.True(await TcpPorts.IsAcceptingAsync(port, TimeSpan.FromSeconds(2)));
        }
        finally
        {
            await server.DisposeAsync();
        }

        Assert.False(IsRunning(pid));
        Assert.False(await TcpPorts.IsAcceptingAsync(port, TimeSpan.FromSeconds(2)));
        Assert.True(TcpPorts.IsFree(port));
        Assert.False(Directory.Exists(dataDirectory));

        await server.DisposeAsync(); // idempotent
    }

    [Fact]
    public async Task Two_Azurite_servers_run_side_by_side_on_different_ports()
    {
        await using var first = await AzuriteServer.StartAsync();
        await using var second = await AzuriteServer.StartAsync();

        Assert.NotEqual(first.Port, second.Port);
        var a = await first.CreateContainerAsync();
        var b = await second.CreateContainerAsync();
        Assert.True(await a.ExistsAsync());
        Assert.False(await second.CreateServiceClient().GetBlobContainerClient(a.Name).ExistsAsync());
        Assert.True(await b.ExistsAsync());
    }

    [Fact]
    public void Container_names_are_valid_and_unique()
    {
        var name = AzuriteServer.NewContainerName("--A_very long Prefix!! with stuff that goes on and on--");
        Assert.InRange(name.Length, 3, 63);
        Assert.Matches("^[a-z0-9]+(-[a-z0-9]+)*$", name);
        Assert.NotEqual(AzuriteServer.NewContainerName(null), AzuriteServer.NewContainerName(null));
        Assert.Matches("^[a-z0-9]{32}$", AzuriteServer.NewContainerName("!!!"));
    }

    [Fact]
    public async Task Redis_starts_answers_PING_and_dispose_frees_everything()
    {
        var server = await RedisServer.StartAsync();
        var port = server.Port;
        var pid = server.ProcessId;
        var workingDirectory = server.WorkingDirectory;
        try
        {
            Assert.Equal($"127.0.0.1:{port}", server.Endpoint);
            Assert.Equal("+PONG", await RawPingAsync(port));
        }
        finally
        {
            await server.DisposeAsync();
        }

        Assert.False(IsRunning(pid));
        Assert.False(await TcpPorts.IsAcceptingAsync(port, TimeSpan.FromSeconds(2)));
        Assert.False(Directory.Exists(workingDirectory));
    }

    [Fact]
    public void TempShmDirectory_lives_under_dev_shm_and_is_deleted_recursively()
    {
        string path;
        using (var shm = new TempShmDirectory())
        {
            path = shm.Path;
            Assert.StartsWith("/dev/shm/faascache-test-", path, StringComparison.Ordinal);
            Assert.True(Directory.Exists(path));
            Directory.CreateDirectory(Path.Combine(path, "AzureFunctions", "nested"));
            File.WriteAllBytes(Path.Combine(path, "AzureFunctions", "map"), new byte[4096]);
            File.WriteAllText(Path.Combine(path, "AzureFunctions", "nested", "x"), "x");
        }

        Assert.False(Directory.Exists(path));
    }

    private static bool IsRunning(int pid)
    {
        try
        {
            using var process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static async Task<string> RawPingAsync(int port)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, port);
        var stream = client.GetStream();
        await stream.WriteAsync("*1\r\n$4\r\nPING\r\n"u8.ToArray());
        var buffer = new byte[64];
        var reply = new StringBuilder();
        while (!reply.ToString().EndsWith("\r\n", StringComparison.Ordinal))
        {
            var read = await stream.ReadAsync(buffer);
            Assert.NotEqual(0, read);
            reply.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        return reply.ToString().TrimEnd();
    }

    /// <summary>Records the x-ms-version header of every request the client sends.</summary>
    private sealed class VersionCapture : HttpPipelineSynchronousPolicy
    {
        public List<string> Seen { get; } = [];

        public override void OnSendingRequest(HttpMessage message)
        {
            if (message.Request.Headers.TryGetValue("x-ms-version", out var version))
            {
                lock (Seen)
                {
                    Seen.Add(version);
                }
            }
        }
    }
}

/// <summary>Declares the shared "Azurite" collection in this test assembly (xunit 2 needs it here).</summary>
[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;

/// <summary>Two classes in the "Azurite" collection share one server.</summary>
[Collection(AzuriteCollection.Name)]
public sealed class AzuriteCollectionFixtureTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task Collection_fixture_provides_a_running_Azurite()
    {
        var container = await azurite.CreateContainerAsync("collection");
        await container.GetBlobClient("x").UploadAsync(BinaryData.FromString("x"));
        Assert.True(await container.GetBlobClient("x").ExistsAsync());
        Assert.Equal(azurite.Server.BlobEndpoint, azurite.BlobEndpoint);
    }
}

/// <summary>A class fixture gets its own Azurite.</summary>
public sealed class AzuriteClassFixtureTests(AzuriteFixture azurite) : IClassFixture<AzuriteFixture>
{
    [Fact]
    public async Task Class_fixture_provides_a_running_Azurite()
    {
        var properties = await azurite.CreateServiceClient().GetPropertiesAsync();
        Assert.NotNull(properties.Value);
    }
}
