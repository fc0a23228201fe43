namespace FaaSCache.ResultCaching;

/// <summary>Where function results are kept: this instance (<see cref="LocalResultStore"/>), the key's owner, or Redis.</summary>
public interface IResultStore
{
    /// <summary>The result under <paramref name="key"/>, or null when there is none (or it expired).</summary>
    /// <param name="key">The result key (the function's name and the hash of its key parts and input versions).</param>
    /// <param name="cancellationToken">Cancels the lookup.</param>
    /// <returns>The result.</returns>
    Task<CachedResult?> GetAsync(string key, CancellationToken cancellationToken);

    /// <summary>Keeps <paramref name="result"/> under <paramref name="key"/> for <paramref name="ttl"/>.</summary>
    /// <param name="key">The result key.</param>
    /// <param name="result">The result.</param>
    /// <param name="ttl">How long it is kept.</param>
    /// <param name="cancellationToken">Cancels the store.</param>
    /// <returns>A task.</returns>
    Task SetAsync(string key, CachedResult result, TimeSpan ttl, CancellationToken cancellationToken);
}
