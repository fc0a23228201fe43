using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Specialized;
using FaaSCache.Storage;

namespace FaaSCache.Membership;

/// <summary>The Azure conveniences of <see cref="MembershipStore"/>: a store over an <see cref="AzureBlobStore"/> built from a connection string or a container client.</summary>
public sealed partial class MembershipStore
{
    /// <summary>The newest blob service version Azurite 3.35.0 accepts (the SDK's default is newer).</summary>
    public const BlobClientOptions.ServiceVersion PinnedServiceVersion = BlobClientOptions.ServiceVersion.V2025_11_05;

    /// <summary>Creates a store for <paramref name="app"/>'s list in <paramref name="container"/>, through an <see cref="AzureBlobStore"/> on the container's client.</summary>
    /// <param name="container">The container holding membership blobs (created on the first write if missing).</param>
    /// <param name="app">The app name; see <see cref="BlobNameFor"/>.</param>
    /// <param name="options">Retry limits; defaults when null.</param>
    /// <param name="logger">Logger for retries.</param>
    /// <exception cref="ArgumentException">The app name is not usable.</exception>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="options"/> are out of range.</exception>
    public MembershipStore(BlobContainerClient container, string app, MembershipStoreOptions? options = null, ILogger? logger = null)
        : this(StoreOf(container), app, container.Name, options, logger)
    {
    }

    /// <summary>Creates a store from a connection string, with client options pinned to <see cref="PinnedServiceVersion"/>.</summary>
    /// <param name="connectionString">The storage connection string.</param>
    /// <param name="app">The app name; see <see cref="BlobNameFor"/>.</param>
    /// <param name="containerName">The container of the membership blobs.</param>
    /// <param name="_options">Retry limits of <see cref="UpdateAsync"/>; defaults when null.</param>
    /// <param name="_logger">Logger for retries.</param>
    /// <param name="clientOptions">The blob client's options (<see cref="CreateClientOptions"/> when null; a daemon passes <see cref="CreateDaemonClientOptions"/>).</param>
    /// <exception cref="ArgumentException">The app or container name is not usable.</exception>
    public static MembershipStore Create(
        string connectionString,
        string app,
        string containerName = DefaultContainerName,
        MembershipStoreOptions? _options = null,
        ILogger? _logger = null,
        BlobClientOptions? clientOptions = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(connectionString);
        ValidateContainerName(containerName);
        var service = new BlobServiceClient(connectionString, clientOptions ?? CreateClientOptions());
        return new MembershipStore(new AzureBlobStore(service, ClientRetriesOnly()), app, containerName, _options, _logger);
    }

    /// <summary>
    /// Client options for a heartbeating daemon: one attempt per request, at most <paramref name="attemptTimeout"/> long.
    /// The daemon's loop tries again within a heartbeat interval by itself; the SDK's own back-off (1.6 + 3.2 + 6.4 s)
    /// would keep a heartbeat asleep for seconds after storage answers again (a restarted storage account), and the
    /// instance without its lease all that time, removed by the others, whose heartbeats happened to land first.
    /// </summary>
    public static BlobClientOptions CreateDaemonClientOptions(TimeSpan attemptTimeout)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(attemptTimeout, TimeSpan.Zero);
        BlobClientOptions options = CreateClientOptions();
        options.Retry.MaxRetries = 0;
        options.Retry.NetworkTimeout = attemptTimeout;
        return options;
    }

    /// <summary>Blob client options pinned to <see cref="PinnedServiceVersion"/>.</summary>
    public static BlobClientOptions CreateClientOptions() => new(PinnedServiceVersion);

    private static AzureBlobStore StoreOf(BlobContainerClient container)
    {
        ArgumentNullException.ThrowIfNull(container);
        return new AzureBlobStore(container.GetParentBlobServiceClient(), ClientRetriesOnly());
    }

    /// <summary>
    /// The store's pipeline out of the way: the blob client's options decide retries and timeouts, as they did before
    /// membership went through <see cref="IBlobStore"/>, and no circuit breaker holds a heartbeat off once storage is back.
    /// </summary>
    private static StorageResilienceOptions ClientRetriesOnly() => new()
    {
        MaxRetries = 0,
        AttemptTimeout = TimeSpan.FromDays(1),
        BreakerMinimumThroughput = int.MaxValue,
    };
}
