namespace FaaSCache.ResultCaching;

/// <summary>Asks another cachelet, the owner of a result key, for a function result or gives it one to keep.</summary>
public interface IResultPeers
{
    /// <summary>The result <paramref name="memberId"/> keeps under <paramref name="key"/>, or null.</summary>
    /// <param name="memberId">The owner.</param>
    /// <param name="key">The result key.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The encoded result (<see cref="CachedResult.Encode"/>), or null.</returns>
    /// <exception cref="FaaSCache.Cluster.PeerUnavailableException">The owner cannot be reached.</exception>
    Task<byte[]?> GetResultAsync(string memberId, string key, CancellationToken cancellationToken);

    /// <summary>Gives <paramref name="memberId"/> a result to keep for <paramref name="ttl"/>.</summary>
    /// <param name="memberId">The owner.</param>
    /// <param name="key">The result key.</param>
    /// <param name="result">The encoded result.</param>
    /// <param name="ttl">How long.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>Whether the owner keeps it.</returns>
    /// <exception cref="FaaSCache.Cluster.PeerUnavailableException">The owner cannot be reached.</exception>
    Task<bool> PutResultAsync(string memberId, string key, byte[] result, TimeSpan ttl, CancellationToken cancellationToken);
}
