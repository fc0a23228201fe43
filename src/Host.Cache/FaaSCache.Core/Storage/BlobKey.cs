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

        string blobName = key[(slash + 1)..];
        if (WhyInvalidBlobName(blobName) is { } why)
        {
            throw new ArgumentException($"Key '{key}': blob name '{blobName}' {why}.", nameof(key));
        }

        return new BlobKey(container, blobName);
    }

    /// <summary>
    /// Why <paramref name="blobName"/> cannot name a blob here, or null: 1 to 1,024 characters, and no segment (between
    /// '/' or '') that is empty, '.' or '..'. HTTP clients and System.Uri fold such segments into the path, so
    /// <c>shared/../secret/x</c> would reach another container's blob under a SAS for <c>shared</c>.
    /// </summary>
    public static string? WhyInvalidBlobName(string blobName)
    {
        ArgumentNullException.ThrowIfNull(blobName);
        if (blobName.Length is 0 or > MaxBlobNameLength)
        {
            return $"must be 1 to {MaxBlobNameLength} characters long (it has {blobName.Length})";
        }

        ReadOnlySpan<char> rest = blobName;
        while (true)
        {
            int end = rest.IndexOfAny('/', '\\');
            ReadOnlySpan<char> segment = end < 0 ? rest : rest[..end];
            if (segment.Length == 0 || segment is "." || segment is "..")
            {
                return segment.Length == 0
                    ? "has an empty path segment (a leading, trailing or doubled '/'), which storage's URLs cannot carry"
                    : $"has a '{segment.ToString()}' path segment, which HTTP clients resolve to another path";
            }

            if (end < 0)
            {
                return null;
            }

            rest = rest[(end + 1)..];
        }
    }

    /// <summary>The longest blob name storage takes.</summary>
    public const int MaxBlobNameLength = 1024;

    /// <inheritdoc />
    public override string ToString() => Container + "/" + BlobName;
}
