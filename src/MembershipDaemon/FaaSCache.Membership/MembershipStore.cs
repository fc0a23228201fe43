using System.Globalization;
using Azure;
using FaaSCache.Storage;

namespace FaaSCache.Membership;

/// <summary>A read of the membership blob: the list and the ETag it had (null when the blob does not exist).</summary>
/// <param name="List">The members (empty when the blob or its container is missing).</param>
/// <param name="ETag">The blob's ETag, for a compare-and-swap write; null when there is no blob yet.</param>
public sealed record MembershipSnapshot(MembershipList List, ETag? ETag);

/// <summary>
/// The membership list of one app, kept in one JSON blob (<c>&lt;container&gt;/&lt;app&gt;.json</c>) of an
/// <see cref="IBlobStore"/> and changed only by compare-and-swap on the blob's ETag
/// (<see cref="IBlobStore.UploadIfUnchangedAsync"/>), so concurrent writers never lose each other's changes. Storage
/// failures are the store's own (an <see cref="AzureBlobStore"/>'s <see cref="StorageUnavailableException"/>); the Azure
/// conveniences (<see cref="Create"/>, client options) are in <c>MembershipStore.Azure.cs</c>.
/// </summary>
/// <remarks>Safe to use from several threads; holds no state but the store.</remarks>
public sealed partial class MembershipStore
{
    /// <summary>The container used when none is configured.</summary>
    public const string DefaultContainerName = "faascache-membership";

    /// <summary>The longest app name accepted.</summary>
    public const int MaxAppNameLength = 200;

    private const string JsonContentType = "application/json";

    private readonly IBlobStore _storage;
    private readonly MembershipStoreOptions _options;
    private readonly ILogger _logger;

    /// <summary>Creates a store for <paramref name="app"/>'s list in <paramref name="containerName"/> of <paramref name="storage"/>.</summary>
    /// <param name="storage">The blob store (an <see cref="AzureBlobStore"/>, or an in-memory one in unit tests).</param>
    /// <param name="app">The app name; see <see cref="BlobNameFor"/>.</param>
    /// <param name="containerName">The container holding membership blobs (created on the first write if missing).</param>
    /// <param name="options">Retry limits; defaults when null.</param>
    /// <param name="logger">Logger for retries.</param>
    /// <exception cref="ArgumentException">The app or container name is not usable.</exception>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="options"/> are out of range.</exception>
    public MembershipStore(IBlobStore storage, string app, string containerName = DefaultContainerName, MembershipStoreOptions? options = null, ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(storage);
        _options = new MembershipStoreOptionsValidator().ThrowIfInvalid(options ?? new MembershipStoreOptions());
        string blobName = BlobNameFor(app);
        ValidateContainerName(containerName);
        _storage = storage;
        _logger = logger ?? NullLogger.Instance;
        App = app;
        BlobPath = $"{containerName}/{blobName}";
    }

    /// <summary>Gets the app name as given.</summary>
    public string App { get; }

    /// <summary>Gets "container/blob" of the membership blob (used in messages, and its key in the store).</summary>
    public string BlobPath { get; }

    /// <summary>Gets the blob's URI (the store's account URI and <see cref="BlobPath"/>).</summary>
    public Uri BlobUri
    {
        get
        {
            var uri = new UriBuilder(_storage.AccountUri);
            uri.Path = $"{uri.Path.TrimEnd('/')}/{BlobPath}";
            return uri.Uri;
        }
    }

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
        FetchResult<byte[]> read;
        try
        {
            read = await _storage.FetchBytesAsync(BlobPath, knownETag?.ToString(), cancellationToken).ConfigureAwait(false);
        }
        catch (BlobNotFoundException)
        {
            return knownETag is null ? null : new MembershipSnapshot(MembershipList.Empty, null);
        }

        if (read.Status == FetchStatus.NotModified)
        {
            return null;
        }

        var list = MembershipJson.Parse(read.Value, BlobPath);
        return new MembershipSnapshot(list, new ETag(read.ETag!));
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
        for (int attempt = 1; attempt <= _options.MaxAttempts; attempt++)
        {
            MembershipSnapshot current = await ReadAsync(cancellationToken).ConfigureAwait(false);
            MembershipList? next = change(current.List);
            if (next is null || ReferenceEquals(next, current.List))
            {
                return current;
            }

            ConditionalUploadResult written = await _storage.UploadIfUnchangedAsync(
                BlobPath, MembershipJson.Serialize(next), current.ETag?.ToString(), JsonContentType, cancellationToken).ConfigureAwait(false);
            if (written.Written)
            {
                return new MembershipSnapshot(next, new ETag(written.ETag!));
            }

            // Changed since the read (412), created since the read (409) or deleted since the read: read again.
            _logger.LogDebug("Membership blob {Blob} changed under update attempt {Attempt} (precondition failed); retrying", BlobPath, attempt);
            if (attempt < _options.MaxAttempts)
            {
                // Decorrelated jitter: spreads the losers of one race over a growing window so they do not collide again.
                pause = NextPause(pause);
                await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
            }
        }

        throw new MembershipConflictException(BlobPath, _options.MaxAttempts);
    }

    private TimeSpan NextPause(TimeSpan previous)
    {
        double lo = _options.BackoffBase.TotalMilliseconds;
        double hi = Math.Min(_options.BackoffMax.TotalMilliseconds, Math.Max(lo, previous.TotalMilliseconds * 3));
        return TimeSpan.FromMilliseconds(lo + (Random.Shared.NextDouble() * (hi - lo)));
    }

    /// <inheritdoc />
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"MembershipStore({BlobPath})");
}
