using Azure.Storage.Blobs;
using FaaSCache.Testing;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// One end-to-end test's world: an app folder, a shared-memory root under /dev/shm and the host process
/// running the app against the collection's Azurite. Dispose kills whatever still runs, then deletes the
/// folders.
/// </summary>
internal sealed class RunningHost : IAsyncDisposable
{
    private RunningHost(FunctionAppFolder app, TempShmDirectory shm, FaaSCacheHostProcess host, BlobServiceClient blobs)
    {
        App = app;
        Shm = shm;
        Host = host;
        Blobs = blobs;
    }

    public FunctionAppFolder App { get; }

    public TempShmDirectory Shm { get; }

    public FaaSCacheHostProcess Host { get; }

    public BlobServiceClient Blobs { get; }

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
