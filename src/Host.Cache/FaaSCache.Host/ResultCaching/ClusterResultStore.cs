using FaaSCache.Cluster;

namespace FaaSCache.Host.ResultCaching;

/// <summary>
/// Results kept by their key's owner on the cachelets' ring (location <c>cluster</c>), as blobs are: the owner keeps them
/// in its <see cref="LocalResultStore"/>, the others ask it. An owner out of reach is a miss (the function runs) and a
/// store that does not reach it is dropped: a result can always be made again.
/// </summary>
internal sealed class ClusterResultStore(IOwnerLocator owners, IResultPeers? peers, LocalResultStore local, ILogger logger) : IResultStore
{
    public async Task<CachedResult?> GetAsync(string key, CancellationToken cancellationToken)
    {
        if (Remote(key) is not { } owner)
        {
            return local.Get(key);
        }

        try
        {
            return await peers!.GetResultAsync(owner, key, cancellationToken).ConfigureAwait(false) is { } bytes ? CachedResult.Decode(bytes) : null;
        }
        catch (Exception e) when (e is PeerUnavailableException or FormatException)
        {
            logger.LogWarning("Result caching: the owner {Owner} of result {Key} could not answer ({Reason}); the function runs", owner, key, e.Message);
            return null;
        }
    }

    public async Task SetAsync(string key, CachedResult result, TimeSpan ttl, CancellationToken cancellationToken)
    {
        if (Remote(key) is not { } owner)
        {
            local.Set(key, result, ttl);
            return;
        }

        try
        {
            if (!await peers!.PutResultAsync(owner, key, result.Encode(), ttl, cancellationToken).ConfigureAwait(false))
            {
                logger.LogWarning("Result caching: the owner {Owner} of result {Key} keeps no results (started without result caching?)", owner, key);
            }
        }
        catch (PeerUnavailableException e)
        {
            logger.LogWarning("Result caching: result {Key} not kept: its owner {Owner} could not be reached ({Reason})", key, owner, e.Message);
        }
    }

    /// <summary>Where a result is kept, for the invocation record: <c>cluster (this instance owns it)</c> or <c>cluster (owner X)</c>.</summary>
    public string Describe(string key) => Remote(key) is { } owner ? $"cluster (owner {owner})" : "cluster (this instance owns it)";

    /// <summary>The owner of <paramref name="key"/> when it is another member this instance can call; null: this instance keeps it.</summary>
    private string? Remote(string key)
    {
        if (peers is null)
        {
            return null;
        }

        string owner = owners.GetOwner("$results/" + key);
        return string.Equals(owner, owners.SelfId, StringComparison.Ordinal) ? null : owner;
    }
}
