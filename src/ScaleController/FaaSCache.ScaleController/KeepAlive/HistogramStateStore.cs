using Azure;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;

namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>
/// Keeps an app's <see cref="HistogramState"/> in the blob <c>faascache-meta/&lt;app&gt;/histogram.json</c> of the app's
/// storage account, so the histogram survives a controller restart (§3.3; the paper keeps ~1 KB per app).
/// </summary>
public sealed class HistogramStateStore
{
    /// <summary>The container of the controller's per-app metadata.</summary>
    public const string ContainerName = "faascache-meta";

    private readonly BlobContainerClient _container;

    /// <summary>Initializes a new instance of the <see cref="HistogramStateStore"/> class (client options pinned to the service version every component uses).</summary>
    public HistogramStateStore(string connectionString)
    {
        ArgumentException.ThrowIfNullOrEmpty(connectionString);
        _container = new BlobContainerClient(connectionString, ContainerName, MembershipStore.CreateClientOptions());
    }

    /// <summary>The blob name of <paramref name="app"/>'s state.</summary>
    public static string BlobNameFor(string app) => app.ToLowerInvariant() + "/histogram.json";

    /// <summary>Writes <paramref name="state"/>; returns its size in bytes.</summary>
    public async Task<int> SaveAsync(string app, HistogramState state, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(state);
        byte[] json = state.ToJson();
        await _container.CreateIfNotExistsAsync(cancellationToken: cancellationToken);
        await _container.GetBlobClient(BlobNameFor(app)).UploadAsync(
            new BinaryData(json),
            new BlobUploadOptions { HttpHeaders = new BlobHttpHeaders { ContentType = "application/json" } },
            cancellationToken);
        return json.Length;
    }

    /// <summary>Reads <paramref name="app"/>'s state, or null when it has none yet.</summary>
    public async Task<HistogramState?> LoadAsync(string app, CancellationToken cancellationToken)
    {
        try
        {
            Response<BlobDownloadResult> blob = await _container.GetBlobClient(BlobNameFor(app)).DownloadContentAsync(cancellationToken);
            return HistogramState.Parse(blob.Value.Content.ToMemory().Span);
        }
        catch (RequestFailedException e) when (e.Status == 404)
        {
            return null;
        }
    }
}
