using System.Globalization;
using Azure;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using FaaSCache.Options;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.Membership;

/// <summary>A read of the membership blob: the list and the ETag it had (null when the blob does not exist).</summary>
/// <param name="List">The members (empty when the blob or its container is missing).</param>
/// <param name="ETag">The blob's ETag, for a compare-and-swap write; null when there is no blob yet.</param>
public sealed record MembershipSnapshot(MembershipList List, ETag? ETag);

/// <summary>
/// The membership list of one app, kept in one JSON blob (<c>&lt;container&gt;/&lt;app&gt;.json</c>) and changed
/// only by compare-and-swap on the blob's ETag, so concurrent writers never lose each other's changes.
/// </summary>
/// <remarks>Safe to use from several threads; holds no state but the container client.</remarks>
public sealed class MembershipStore
{
    /// <summary>The container used when none is configured.</summary>
    public const string DefaultContainerName = "faascache-membership";

    /// <summary>The longest app name accepted.</summary>
    public const int MaxAppNameLength = 200;

    /// <summary>The newest blob service version Azurite 3.35.0 accepts (the SDK's default is newer).</summary>
    public const BlobClientOptions.ServiceVersion PinnedServiceVersion = BlobClientOptions.ServiceVersion.V2025_11_05;

    private readonly BlobContainerClient _container;
    private readonly BlobClient _blob;
    private readonly MembershipStoreOptions _options;
    private readonly ILogger _logger;

    /// <summary>Creates a store for <paramref name="app"/>'s list in <paramref name="container"/>.</summary>
    /// <param name="container">The container holding membership blobs (created on the first write if missing).</param>
    /// <param name="app">The app name; see <see cref="BlobNameFor"/>.</param>
    /// <param name="options">Retry limits; defaults when null.</param>
    /// <param name="logger">Logger for retries.</param>
    /// <exception cref="ArgumentException">The app name is not usable.</exception>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="options"/> are out of range.</exception>
    public MembershipStore(BlobContainerClient container, string app, MembershipStoreOptions? options = null, ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(container);
        _options = new MembershipStoreOptionsValidator().ThrowIfInvalid(options ?? new MembershipStoreOptions());

        string blobName = BlobNameFor(app);
        _container = container;
        _blob = container.GetBlobClient(blobName);
        _logger = logger ?? NullLogger.Instance;
        App = app;
        BlobPath = $"{_container.Name}/{blobName}";
    }

    /// <summary>Gets the app name as given.</summary>
    public string App { get; }

    /// <summary>Gets "container/blob" of the membership blob (used in messages).</summary>
    public string BlobPath { get; }

    /// <summary>Gets the blob's URI.</summary>
    public Uri BlobUri => _blob.Uri;

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
        var client = new BlobContainerClient(connectionString, containerName, clientOptions ?? CreateClientOptions());
        return new MembershipStore(client, app, _options, _logger);
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

    /// <summary>
    /// The blob name of <paramref name="app"/>'s list: the name lower-cased (Function App names are
    /// case-insensitive) plus <c>.json</c>.
    /// </summary>
    /// <exception cref="ArgumentException">
    /// The name is empty, longer than <see cref="MaxAppNameLength"/>, or has characters other than ASCII letters,
    /// digits, '-', '_' and '.', or does not start and end with a letter or digit.
    /// </exception>
    public static string BlobNameFor(string app)
    {
        if (string.IsNullOrEmpty(app))
        {
            throw new ArgumentException("The app name must be a non-empty string.", nameof(app));
        }

        bool valid = app.Length <= MaxAppNameLength
            && char.IsAsciiLetterOrDigit(app[0])
            && char.IsAsciiLetterOrDigit(app[^1])
            && app.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.');
        if (!valid)
        {
            throw new ArgumentException(
                $"The app name '{app.ReplaceLineEndings(" ")}' cannot name a membership blob: use 1 to {MaxAppNameLength} ASCII letters, " +
                "digits, '-', '_' or '.', starting and ending with a letter or digit.",
                nameof(app));
        }

        return app.ToLowerInvariant() + ".json";
    }

    /// <summary>Throws unless <paramref name="name"/> is a valid blob container name.</summary>
    /// <exception cref="ArgumentException">3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit.</exception>
    public static void ValidateContainerName(string name)
    {
        bool valid = name is { Length: >= 3 and <= 63 }
            && (char.IsAsciiLetterLower(name[0]) || char.IsAsciiDigit(name[0]))
            && name[^1] != '-'
            && name.All(c => char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c == '-')
            && !name.Contains("--", StringComparison.Ordinal);
        if (!valid)
        {
            throw new ArgumentException(
                $"'{name}' is not a valid blob container name: use 3 to 63 lower-case letters, digits and single hyphens, " +
                "starting and ending with a letter or digit.",
                nameof(name));
        }
    }

    /// <summary>Reads the list and its ETag; a missing blob or container reads as an empty list with no ETag.</summary>
    /// <exception cref="MembershipFormatException">The blob is not a valid membership list.</exception>
    public async Task<MembershipSnapshot> ReadAsync(CancellationToken cancellationToken = default)
        => await ReadIfChangedAsync(null, cancellationToken).ConfigureAwait(false)
            ?? new MembershipSnapshot(MembershipList.Empty, null);

    /// <summary>
    /// One conditional GET: null when the blob still has <paramref name="knownETag"/> (HTTP 304, nothing
    /// downloaded), else the new list. With a null <paramref name="knownETag"/>, null means the blob still does not exist.
    /// </summary>
    /// <exception cref="MembershipFormatException">The blob is not a valid membership list.</exception>
    public async Task<MembershipSnapshot?> ReadIfChangedAsync(ETag? knownETag, CancellationToken cancellationToken = default)
    {
        var download = new BlobDownloadOptions
        {
            Conditions = knownETag is { } etag ? new BlobRequestConditions { IfNoneMatch = etag } : null,
        };

        Response<BlobDownloadResult> response;
        try
        {
            response = await _blob.DownloadContentAsync(download, cancellationToken).ConfigureAwait(false);
        }
        catch (RequestFailedException e) when (e.Status == 304)
        {
            return null;
        }
        catch (RequestFailedException e) when (e.Status == 404)
        {
            return knownETag is null ? null : new MembershipSnapshot(MembershipList.Empty, null);
        }

        if (response.GetRawResponse().Status == 304)
        {
            // Depending on the SDK path a 304 comes back as a body-less response instead of an exception.
            return null;
        }

        BlobDownloadResult result = response.Value;
        var list = MembershipJson.Parse(result.Content.ToMemory().Span, BlobPath);
        return new MembershipSnapshot(list, result.Details.ETag);
    }

    /// <summary>
    /// Compare-and-swap: reads the list, applies <paramref name="change"/>, and writes the result only if the
    /// blob still has the ETag it was read with (<c>If-Match</c>; <c>If-None-Match: *</c> when creating it).
    /// When another writer got there first (412/409) it waits a jittered, growing pause and starts again from a
    /// fresh read, so <paramref name="change"/> may run several times and must not have side effects it cannot repeat.
    /// </summary>
    /// <param name="change">
    /// Maps the current list to the wanted one; returning null or the same instance writes nothing.
    /// </param>
    /// <param name="cancellationToken">Cancels the update.</param>
    /// <returns>The list now in the blob and its ETag.</returns>
    /// <exception cref="MembershipConflictException">Every one of <see cref="MembershipStoreOptions.MaxAttempts"/> writes lost the race.</exception>
    /// <exception cref="MembershipFormatException">The blob is not a valid membership list.</exception>
    public async Task<MembershipSnapshot> UpdateAsync(Func<MembershipList, MembershipList?> change, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(change);
        TimeSpan pause = _options.BackoffBase;
        RequestFailedException? last = null;
        for (int attempt = 1; attempt <= _options.MaxAttempts; attempt++)
        {
            MembershipSnapshot current = await ReadAsync(cancellationToken).ConfigureAwait(false);
            MembershipList? next = change(current.List);
            if (next is null || ReferenceEquals(next, current.List))
            {
                return current;
            }

            try
            {
                ETag written = await WriteAsync(next, current.ETag, cancellationToken).ConfigureAwait(false);
                return new MembershipSnapshot(next, written);
            }
            catch (RequestFailedException e) when (e.Status is 412 or 409 || (e.Status == 404 && current.ETag is not null))
            {
                // 412: changed since the read (If-Match); 409: created since the read (If-None-Match: *);
                // 404 after reading a blob: deleted since the read. In every case: read again.
                last = e;
                _logger.LogDebug("Membership blob {Blob} changed under update attempt {Attempt} ({Status}); retrying", BlobPath, attempt, e.Status);
            }

            if (attempt < _options.MaxAttempts)
            {
                // Decorrelated jitter: spreads the losers of one race over a growing window so they do not collide again.
                pause = NextPause(pause);
                await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
            }
        }

        throw new MembershipConflictException(BlobPath, _options.MaxAttempts, last);
    }

    private TimeSpan NextPause(TimeSpan previous)
    {
        double lo = _options.BackoffBase.TotalMilliseconds;
        double hi = Math.Min(_options.BackoffMax.TotalMilliseconds, Math.Max(lo, previous.TotalMilliseconds * 3));
        return TimeSpan.FromMilliseconds(lo + (Random.Shared.NextDouble() * (hi - lo)));
    }

    private async Task<ETag> WriteAsync(MembershipList list, ETag? expected, CancellationToken cancellationToken)
    {
        var upload = new BlobUploadOptions
        {
            HttpHeaders = new BlobHttpHeaders { ContentType = "application/json" },
            Conditions = expected is { } etag
                ? new BlobRequestConditions { IfMatch = etag }
                : new BlobRequestConditions { IfNoneMatch = ETag.All },
        };
        var content = BinaryData.FromBytes(MembershipJson.Serialize(list));

        for (int round = 0; ; round++)
        {
            try
            {
                Response<BlobContentInfo> response = await _blob.UploadAsync(content, upload, cancellationToken).ConfigureAwait(false);
                return response.Value.ETag;
            }
            catch (RequestFailedException e) when (e.Status == 404 && round == 0 && IsContainerMissing(e))
            {
                await CreateContainerAsync(cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private static bool IsContainerMissing(RequestFailedException e)
        => string.Equals(e.ErrorCode, BlobErrorCode.ContainerNotFound.ToString(), StringComparison.Ordinal) || e.ErrorCode is null;

    private async Task CreateContainerAsync(CancellationToken cancellationToken)
    {
        try
        {
            var created = await _container.CreateIfNotExistsAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
            if (created is not null)
            {
                _logger.LogInformation("Created membership container {Container}", _container.Name);
            }
        }
        catch (RequestFailedException e) when (e.Status == 403)
        {
            // A container-scoped SAS may not create containers; the retried write says what is really wrong.
            _logger.LogDebug(e, "Could not create membership container {Container}", _container.Name);
        }
    }

    /// <inheritdoc />
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"MembershipStore({BlobPath})");
}
