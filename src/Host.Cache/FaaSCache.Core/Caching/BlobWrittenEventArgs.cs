namespace FaaSCache.Caching;

/// <summary>A blob was written.</summary>
/// <param name="key">The key, <c>container/blob</c>.</param>
/// <param name="version">
/// The version the write was announced under: the storage ETag when persisted synchronously, else the cachelet's own
/// version, with which the background write tags the blob in storage.
/// </param>
/// <param name="reachesStorage">False when the write never goes to storage (<c>persist: none</c>).</param>
public sealed class BlobWrittenEventArgs(string key, string version, bool reachesStorage = true) : EventArgs
{
    /// <summary>Gets a value indicating whether the write is (or will be) in storage.</summary>
    public bool ReachesStorage { get; } = reachesStorage;

    /// <summary>Gets the key.</summary>
    public string Key { get; } = key;

    /// <summary>Gets the version.</summary>
    public string Version { get; } = version;
}
