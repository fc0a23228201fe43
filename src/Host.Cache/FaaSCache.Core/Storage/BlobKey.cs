namespace FaaSCache.Storage;

/// <summary>A cache key, <c>container/blobName</c>: the namespace of blob storage itself (§3.2).</summary>
public readonly record struct BlobKey
{
    private BlobKey(string container, string blobName)
    {
        Container = container;
        BlobName = blobName;
    }

    /// <summary>Gets the container name.</summary>
    public string Container { get; }

    /// <summary>Gets the blob name (may contain '/').</summary>
    public string BlobName { get; }

    /// <summary>Parses <c>container/blobName</c>; throws <see cref="ArgumentException"/> naming what is wrong.</summary>
    public static BlobKey Parse(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        int slash = key.IndexOf('/', StringComparison.Ordinal);
        if (slash <= 0 || slash == key.Length - 1)
        {
            throw new ArgumentException($"Key '{key}' is not of the form 'container/blobName'.", nameof(key));
        }

        string container = key[..slash];
        if (container.Length is < 3 or > 63 || container.Any(c => !(char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c == '-')))
        {
            throw new ArgumentException($"Key '{key}': container name '{container}' must be 3 to 63 lowercase letters, digits or '-'.", nameof(key));
        }

        return new BlobKey(container, key[(slash + 1)..]);
    }

    /// <inheritdoc />
    public override string ToString() => Container + "/" + BlobName;
}
