namespace FaaSCache.Host.Triggers;

/// <summary>
/// Blob-trigger receipts in storage, as the real host keeps them (<c>azure-webjobs-hosts/blobreceipts/...</c>): one
/// small blob per (app, function, write, blob), created only if absent. Whoever creates it fires the function, so a
/// write fires each function once, whichever instance saw it first (the cache event or a poll), and a restarted host
/// neither fires old writes again nor misses the ones made while it was down.
/// </summary>
/// <param name="storage">The app's storage.</param>
/// <param name="app">The app name (instances of one app share receipts).</param>
public sealed class BlobReceipts(IBlobStore storage, string app)
{
    /// <summary>The container of the receipts (the real host's).</summary>
    public const string Container = "azure-webjobs-hosts";

    /// <summary>
    /// The identity of a write, the same wherever it is seen: the version a cachelet tagged the blob with (an
    /// asynchronous write, announced before it reached storage), else the blob's ETag.
    /// </summary>
    public static string WriteOf(string etag, string? writeId) => writeId ?? etag;

    /// <summary>Claims (function, write of key): true for the one caller that should fire it.</summary>
    public Task<bool> TryClaimAsync(string function, string key, string write, CancellationToken cancellationToken)
        => storage.TryCreateAsync(ReceiptKey(function, key, write), Encoding.UTF8.GetBytes(write), cancellationToken);

    /// <summary>The receipt blob of (function, write of key).</summary>
    public string ReceiptKey(string function, string key, string write)
        => $"{Container}/blobreceipts/{Segment(app)}/{Segment(function)}/{Segment(write)}/{key}";

    // ETags carry quotes and versions may carry characters a path segment should not.
    private static string Segment(string text)
    {
        var clean = new StringBuilder(text.Length);
        foreach (char c in text)
        {
            clean.Append(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' ? c : '_');
        }

        return clean.ToString();
    }
}
