namespace FaaSCache.Caching;

/// <summary>A blob was written.</summary>
/// <param name="key">The key, <c>container/blob</c>.</param>
/// <param name="version">The version now cached (the storage ETag once persisted).</param>
public sealed class BlobWrittenEventArgs(string key, string version) : EventArgs
{
    /// <summary>Gets the key.</summary>
    public string Key { get; } = key;

    /// <summary>Gets the version.</summary>
    public string Version { get; } = version;
}
