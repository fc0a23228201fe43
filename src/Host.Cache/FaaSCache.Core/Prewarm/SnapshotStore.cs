namespace FaaSCache.Prewarm;

/// <summary>The snapshots read back at load, and how many blobs were unreadable and skipped.</summary>
/// <param name="Snapshots">The snapshots, newest first.</param>
/// <param name="Skipped">Blobs that were corrupt or unreadable (each logged with its name).</param>
public sealed record SnapshotListing(IReadOnlyList<UnloadSnapshot> Snapshots, int Skipped);

/// <summary>
/// Unload snapshots in the app's own storage account: one JSON blob per unload,
/// <c>faascache-meta/&lt;app&gt;/snapshots/&lt;utc-ticks&gt;-&lt;instance&gt;.json</c>, so listing in name order is
/// listing in time order. A corrupt or unreadable snapshot is logged with its name and skipped, never fatal.
/// </summary>
public sealed partial class SnapshotStore
{
    /// <summary>The container of FaaSCache's own metadata.</summary>
    public const string Container = "faascache-meta";

    private readonly IBlobStore _store;
    private readonly ILogger _logger;

    /// <summary>Initializes a new instance of the <see cref="SnapshotStore"/> class.</summary>
    /// <param name="store">The app's storage.</param>
    /// <param name="appName">The app whose snapshots these are.</param>
    /// <param name="logger">Logger.</param>
    public SnapshotStore(IBlobStore store, string appName, ILogger<SnapshotStore>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentException.ThrowIfNullOrWhiteSpace(appName);
        _store = store;
        AppName = appName.Trim();
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <summary>Gets the app name.</summary>
    public string AppName { get; }

    /// <summary>Gets the blob-name prefix of this app's snapshots.</summary>
    public string Prefix => $"{AppName}/snapshots/";

    /// <summary>The key (<c>container/blob</c>) a snapshot is stored under.</summary>
    public string KeyOf(UnloadSnapshot snapshot)
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        return $"{Container}/{Prefix}{snapshot.TakenAt.UtcTicks.ToString("D19", CultureInfo.InvariantCulture)}-{snapshot.InstanceId}.json";
    }

    /// <summary>Writes <paramref name="snapshot"/>; returns its key.</summary>
    public async Task<string> WriteAsync(UnloadSnapshot snapshot, CancellationToken cancellationToken = default)
    {
        string key = KeyOf(snapshot);
        byte[] json = JsonSerializer.SerializeToUtf8Bytes(snapshot, PrewarmJsonContext.Default.UnloadSnapshot);
        using var content = new MemoryStream(json, writable: false);
        await _store.UploadAsync(key, content, cancellationToken).ConfigureAwait(false);
        return key;
    }

    /// <summary>Reads the newest <paramref name="max"/> snapshots taken at or after <paramref name="since"/>.</summary>
    public async Task<SnapshotListing> ReadAsync(DateTimeOffset since, int max, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(max);
        var names = new List<(string Key, long Ticks)>();
        int skipped = 0;
        await foreach (BlobListing blob in _store.ListAsync(Container, Prefix, cancellationToken).ConfigureAwait(false))
        {
            if (TicksOf(blob.Key) is not { } ticks)
            {
                LogSkipped(blob.Key, "its name carries no time stamp");
                skipped++;
            }
            else if (ticks >= since.UtcTicks)
            {
                names.Add((blob.Key, ticks));
            }
        }

        var snapshots = new List<UnloadSnapshot>();
        foreach ((string key, _) in names.OrderByDescending(n => n.Ticks).ThenBy(n => n.Key, StringComparer.Ordinal).Take(max))
        {
            UnloadSnapshot? snapshot = await TryReadAsync(key, cancellationToken).ConfigureAwait(false);
            if (snapshot is null)
            {
                skipped++;
            }
            else
            {
                snapshots.Add(snapshot);
            }
        }

        return new SnapshotListing(snapshots, skipped);
    }

    /// <summary>Deletes one snapshot (one superseded by a newer of the same lifetime); false when it was gone.</summary>
    public Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(key);
        string prefix = $"{Container}/{Prefix}";
        return key.StartsWith(prefix, StringComparison.Ordinal)
            ? _store.DeleteAsync(key, cancellationToken)
            : throw new ArgumentException($"'{key}' is not a snapshot of app {AppName} (they start with '{prefix}').", nameof(key));
    }

    /// <summary>Deletes the snapshots taken before <paramref name="before"/>; returns how many.</summary>
    public async Task<int> PruneAsync(DateTimeOffset before, CancellationToken cancellationToken = default)
    {
        var old = new List<string>();
        await foreach (BlobListing blob in _store.ListAsync(Container, Prefix, cancellationToken).ConfigureAwait(false))
        {
            if (TicksOf(blob.Key) is { } ticks && ticks < before.UtcTicks)
            {
                old.Add(blob.Key);
            }
        }

        foreach (string key in old)
        {
            await _store.DeleteAsync(key, cancellationToken).ConfigureAwait(false);
        }

        return old.Count;
    }

    private async Task<UnloadSnapshot?> TryReadAsync(string key, CancellationToken cancellationToken)
    {
        try
        {
            FetchResult<UnloadSnapshot?> fetched = await _store.FetchAsync(
                key,
                null,
                async (_, _, content, token) => await JsonSerializer.DeserializeAsync(content, PrewarmJsonContext.Default.UnloadSnapshot, token).ConfigureAwait(false),
                cancellationToken).ConfigureAwait(false);
            if (fetched.Value is not { } snapshot || snapshot.Entries.Any(e => e is null || string.IsNullOrEmpty(e.Key)))
            {
                LogSkipped(key, "it holds no snapshot");
                return null;
            }

            return snapshot;
        }
        catch (JsonException e)
        {
            LogSkipped(key, "it is not valid snapshot JSON: " + e.Message);
        }
        catch (BlobNotFoundException)
        {
            LogSkipped(key, "it was deleted while being read");
        }
        catch (Exception e) when (e is IOException or NotSupportedException or InvalidOperationException)
        {
            LogSkipped(key, e.Message);
        }

        return null;
    }

    private static long? TicksOf(string key)
    {
        string name = key[(key.LastIndexOf('/') + 1)..];
        int dash = name.IndexOf('-', StringComparison.Ordinal);
        return dash > 0 && long.TryParse(name.AsSpan(0, dash), NumberStyles.None, CultureInfo.InvariantCulture, out long ticks)
            && ticks <= DateTimeOffset.MaxValue.UtcTicks ? ticks : null;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Pre-warm skipped snapshot {Key}: {Reason}")]
    private partial void LogSkipped(string key, string reason);
}
