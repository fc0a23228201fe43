using System.Net;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// Each port carries its own services only, decided by the connection's local port: admin, metrics and HTTP triggers
/// sent over h2c to the peer port or the workers' FunctionRpc port, or to the SDK endpoint's port, are not served there.
/// </summary>
[Trait("Category", "Security")]
public sealed class PortTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task admin_metrics_and_triggers_answer_on_the_http_port_only_whatever_the_host_header_says()
    {
        string container = "sec-" + Guid.NewGuid().ToString("N")[..10];
        using FunctionAppFolder app = SecurityApp.Build(container);
        await azurite.CreateServiceClient().GetBlobContainerClient(container).CreateIfNotExistsAsync();
        await azurite.CreateServiceClient().GetBlobContainerClient(container).GetBlobClient("open.txt").UploadAsync(BinaryData.FromString("hello"));
        using var shm = new TempShmDirectory();
        int peerPort = FreePorts.Get();
        // Keys off, so that nothing but the port can be what refuses.
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path,
            extraArgs: new Dictionary<string, string> { ["--peer-port"] = peerPort.ToString(System.Globalization.CultureInfo.InvariantCulture) });
        await host.WaitForWorkersAsync();
        int workerPort = SecurityApp.BannerPort(host.Output, "Worker gRPC");
        int sdkPort = SecurityApp.BannerPort(host.Output, "SDK endpoint");
        string[] paths = ["admin/host/status", "admin/invocations", "metrics", "api/open", "api/keyed", "admin/sdk-endpoint/requests"];

        using var http1 = new HttpClient { BaseAddress = host.BaseUri };
        foreach (string path in paths)
        {
            Assert.Equal(HttpStatusCode.OK, (await http1.GetAsync(path)).StatusCode);
        }

        // h2c with prior knowledge, as gRPC clients speak (Kestrel refuses an HTTP/2 Host that differs from :authority).
        using var h2c = new HttpClient(new SocketsHttpHandler { UseProxy = false })
        {
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        foreach (int port in new[] { peerPort, workerPort })
        {
            foreach (string path in paths)
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, $"http://127.0.0.1:{port}/{path}") { Version = HttpVersion.Version20, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
                using HttpResponseMessage response = await h2c.SendAsync(request);
                Assert.True(response.StatusCode == HttpStatusCode.NotFound, $"GET {path} on port {port} (peer {peerPort}, worker {workerPort}): {response.StatusCode} {await response.Content.ReadAsStringAsync()} {string.Join("; ", response.Headers)}");
            }

            using var remove = new HttpRequestMessage(HttpMethod.Post, $"http://127.0.0.1:{port}/admin/cache/remove?key={container}/open.txt") { Version = HttpVersion.Version20, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
            using HttpResponseMessage removed = await h2c.SendAsync(remove);
            Assert.Equal(HttpStatusCode.NotFound, removed.StatusCode);
        }

        // The SDK endpoint's port serves the Blob API only, whatever the Host header names: /admin there is an account
        // that is not the app's.
        foreach (string path in paths)
        {
            SecurityApp.RawResponse response = await SecurityApp.SendRawAsync(sdkPort, "GET", "/" + path, [("Host", $"127.0.0.1:{host.Port}")]);
            Assert.True(response.Status == 404 && response.ErrorCode == "ResourceNotFound", $"GET {path} on the SDK port: {response}");
        }

        // FunctionRpc is not on the HTTP port.
        using (HttpResponseMessage rpc = await http1.PostAsync("AzureFunctionsRpcMessages.FunctionRpc/EventStream", new ByteArrayContent([0, 0, 0, 0, 0])))
        {
            Assert.Equal(HttpStatusCode.NotFound, rpc.StatusCode);
        }

        // And the host still works.
        Assert.Equal("hello", await http1.GetStringAsync("api/open"));
    }
}
