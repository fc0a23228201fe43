namespace FaaSCache.Caching;

/// <summary>What a write did.</summary>
/// <param name="Key">The key.</param>
/// <param name="Version">The version now cached: the storage ETag once persisted, else a local version token.</param>
/// <param name="Cached">Whether the cache keeps the object.</param>
/// <param name="Persisted">Whether storage had it when the write returned.</param>
/// <param name="Persist">The persistence mode in force.</param>
public sealed record WriteReceipt(string Key, string Version, bool Cached, bool Persisted, PersistMode Persist)
{
    /// <summary>
    /// Gets the bytes this write copied, measured where each copy happened: into a new map on this instance (0 when a
    /// worker's map was adopted as it was), plus the bytes sent to the key's owner, which received them into its map.
    /// </summary>
    public long BytesCopied { get; init; }
}
