using FaaSCache.Host.BlobEndpoint;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// One end-to-end test's world: an app folder, a shared-memory root under /dev/shm and the host process
/// running the app against the collection's Azurite. Dispose kills whatever still runs, then deletes the
/// folders.
/// </summary>
internal sealed class RunningHost(FunctionAppFolder app, TempShmDirectory shm, FaaSCacheHostProcess host, BlobServiceClient blobs) : IAsyncDisposable
{
    private static readonly JsonSerializerOptions WebJson = new(JsonSerializerDefaults.Web);

    public FunctionAppFolder App => app;

    public TempShmDirectory Shm => shm;

    public FaaSCacheHostProcess Host => host;

    public BlobServiceClient Blobs => blobs;

    /// <summary>The folder the host's shared-memory maps live in.</summary>
    public string MapDirectory => Path.Combine(Shm.Path, "AzureFunctions");

    /// <summary>Writes <paramref name="app"/>, starts the host on it and waits for its workers.</summary>
    public static async Task<RunningHost> StartAsync(AzuriteFixture azurite, Func<FunctionAppFolder> app, bool cache = true, IDictionary<string, string>? extraArgs = null)
    {
        FunctionAppFolder folder = app();
        TempShmDirectory? shm = null;
        FaaSCacheHostProcess? host = null;
        try
        {
            shm = new TempShmDirectory();
            host = await FaaSCacheHostProcess.StartAsync(folder.Path, azurite.ConnectionString, shm.Path, cache, extraArgs);
            await host.WaitForWorkersAsync();
            return new RunningHost(folder, shm, host, azurite.CreateServiceClient());
        }
        catch
        {
            if (host is not null)
            {
                await host.DisposeAsync();
            }

            shm?.Dispose();
            folder.Dispose();
            throw;
        }
    }

    public async Task UploadAsync(string container, string blob, byte[] content)
    {
        BlobContainerClient client = Blobs.GetBlobContainerClient(container);
        await client.CreateIfNotExistsAsync();
        await client.GetBlobClient(blob).UploadAsync(new BinaryData(content), overwrite: true);
    }

    public async Task<byte[]> DownloadAsync(string container, string blob)
    {
        var content = await Blobs.GetBlobContainerClient(container).GetBlobClient(blob).DownloadContentAsync();
        return content.Value.Content.ToArray();
    }

    /// <summary>GET or POST <paramref name="path"/> with a bounded wait.</summary>
    public async Task<HttpResponseMessage> SendAsync(HttpMethod method, string path, byte[]? body = null, TimeSpan? timeout = null)
    {
        using var request = new HttpRequestMessage(method, path);
        if (body is not null)
        {
            request.Content = new ByteArrayContent(body);
            request.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
        }

        using var cts = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(60));
        return await Host.Http.SendAsync(request, cts.Token);
    }

    /// <summary>GETs <paramref name="path"/>, asserts it answered 200 (naming what it answered if not) and returns its JSON.</summary>
    public async Task<JsonElement> GetJsonAsync(string path)
    {
        using HttpResponseMessage response = await SendAsync(HttpMethod.Get, path);
        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{response.StatusCode}: {body}");
        using JsonDocument json = JsonDocument.Parse(body);
        return json.RootElement.Clone();
    }

    /// <summary>
    /// The connection string the host's workers get for <paramref name="storageConnection"/>: its blob endpoint at the
    /// host's SDK endpoint, as the start-up banner names it (waited for, at most the host's start timeout).
    /// </summary>
    public async Task<string> SdkEndpointConnectionAsync(string storageConnection)
    {
        DateTime deadline = DateTime.UtcNow + FaaSCacheHostProcess.StartTimeout;
        while (true)
        {
            System.Text.RegularExpressions.Match banner = System.Text.RegularExpressions.Regex.Match(Host.Output, @"SDK endpoint\s+(http://\S+)");
            if (banner.Success)
            {
                return StorageConnectionString.TryParse(storageConnection)!.WithBlobEndpoint(new Uri(banner.Groups[1].Value));
            }

            Assert.True(DateTime.UtcNow < deadline, $"The host's banner names no SDK endpoint:\n{Host.Output}");
            await Task.Delay(100);
        }
    }

    /// <summary>What the host's SDK endpoint recorded of the requests for <paramref name="key"/> (<c>container/blob</c>).</summary>
    public async Task<IReadOnlyList<SdkRequestRecord>> SdkRequestsAsync(string key) =>
        (await Host.Http.GetFromJsonAsync<List<SdkRequestRecord>>($"admin/sdk-endpoint/requests?key={Uri.EscapeDataString(key)}", WebJson))!;

    public async ValueTask DisposeAsync()
    {
        try
        {
            await Host.DisposeAsync();
        }
        finally
        {
            Shm.Dispose();
            App.Dispose();
        }
    }
}
