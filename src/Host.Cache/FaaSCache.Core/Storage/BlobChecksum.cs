using System.IO.Hashing;

namespace FaaSCache.Storage;

/// <summary>
/// The whole-object XxHash3 an upload records in the blob's metadata (<see cref="IBlobStore.XxHash3Metadata"/>): an
/// object assembled from ranges fetched by several instances (§4) is checked against it at memory speed (MD5 would
/// cost about a second per 700 MB on one core).
/// </summary>
public static class BlobChecksum
{
    /// <summary>The XxHash3 of <paramref name="content"/> from its current position to the end, as 16 hex digits.</summary>
    public static async Task<string> ComputeAsync(Stream content, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(content);
        var hash = new XxHash3();
        byte[] buffer = ArrayPool<byte>.Shared.Rent(1 << 20);
        try
        {
            int n;
            while ((n = await content.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0)
            {
                hash.Append(buffer.AsSpan(0, n));
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        return Format(hash.GetCurrentHashAsUInt64());
    }

    /// <summary>The XxHash3 of <paramref name="content"/>.</summary>
    public static ulong Of(ReadOnlySpan<byte> content) => XxHash3.HashToUInt64(content);

    /// <summary>Formats a checksum as metadata holds it.</summary>
    public static string Format(ulong checksum) => checksum.ToString("x16", CultureInfo.InvariantCulture);

    /// <summary>The checksum recorded in <paramref name="metadata"/>, or null when there is none (or it is malformed).</summary>
    public static ulong? Parse(IDictionary<string, string>? metadata)
        => metadata is not null && metadata.TryGetValue(IBlobStore.XxHash3Metadata, out string? text)
            && ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong value)
            ? value
            : null;
}
