namespace FaaSCache.Host.BlobEndpoint;

/// <summary>One request the SDK endpoint answered.</summary>
/// <param name="Time">When it was answered.</param>
/// <param name="Operation">read, write, block, commit, delete, forward, or forward-write (a forwarded write that invalidates the cached copies).</param>
/// <param name="Key">The blob, <c>container/blob</c> (the path for account- and container-level requests).</param>
/// <param name="Status">The HTTP status.</param>
/// <param name="Source">How a read was served (lh, lm, rh, rm); null otherwise.</param>
/// <param name="Bytes">The body bytes sent or received.</param>
public sealed record SdkRequestRecord(DateTimeOffset Time, string Operation, string Key, int Status, string? Source, long Bytes);

/// <summary>
/// The endpoint's recent requests, for <c>/admin/sdk-endpoint/requests</c>: SDK reads are not an invocation's bindings, so
/// the invocation records do not show them; this does (how each read was served, what was forwarded).
/// </summary>
public sealed class SdkRequestLog
{
    private const int Capacity = 512;
    private readonly ConcurrentQueue<SdkRequestRecord> _records = new();

    /// <summary>Records one request, dropping the oldest beyond the capacity.</summary>
    public void Add(SdkRequestRecord record)
    {
        _records.Enqueue(record);
        while (_records.Count > Capacity && _records.TryDequeue(out _))
        {
        }
    }

    /// <summary>The recent requests, oldest first, optionally of one key.</summary>
    public IReadOnlyList<SdkRequestRecord> Recent(string? key = null)
        => [.. _records.Where(r => key is null || string.Equals(r.Key, key, StringComparison.Ordinal))];
}
