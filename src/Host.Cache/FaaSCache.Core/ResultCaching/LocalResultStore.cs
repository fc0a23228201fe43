using Microsoft.Extensions.Caching.Memory;

namespace FaaSCache.ResultCaching;

/// <summary>
/// Results in this instance's memory, bounded by <see cref="ResultCacheOptions.CapacityBytes"/> (least recently used
/// out first when full) and each kept for its time-to-live: a function's <c>local</c> results, and the <c>cluster</c>
/// results whose key this instance owns (peers ask it for them).
/// </summary>
public sealed class LocalResultStore : IResultStore, IDisposable
{
    private readonly MemoryCache _results;
    private long _hits, _misses, _stored;

    /// <summary>Initializes a new instance of the <see cref="LocalResultStore"/> class.</summary>
    /// <param name="capacityBytes">The bytes of results kept at most.</param>
    /// <param name="time">The clock the time-to-live counts on.</param>
    public LocalResultStore(long capacityBytes, TimeProvider? time = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacityBytes, 1);
        _results = new MemoryCache(new MemoryCacheOptions { SizeLimit = capacityBytes, Clock = time is null ? null : new Clock(time), CompactionPercentage = 0.25 });
    }

    /// <summary>Gets the lookups that found a result.</summary>
    public long Hits => Interlocked.Read(ref _hits);

    /// <summary>Gets the lookups that found none.</summary>
    public long Misses => Interlocked.Read(ref _misses);

    /// <summary>Gets the results stored.</summary>
    public long Stored => Interlocked.Read(ref _stored);

    /// <inheritdoc />
    public Task<CachedResult?> GetAsync(string key, CancellationToken cancellationToken) => Task.FromResult(Get(key));

    /// <inheritdoc />
    public Task SetAsync(string key, CachedResult result, TimeSpan ttl, CancellationToken cancellationToken)
    {
        Set(key, result, ttl);
        return Task.CompletedTask;
    }

    /// <summary>The result under <paramref name="key"/>, or null.</summary>
    /// <param name="key">The key.</param>
    /// <returns>The result.</returns>
    public CachedResult? Get(string key)
    {
        if (_results.TryGetValue(key, out CachedResult? result) && result is not null)
        {
            Interlocked.Increment(ref _hits);
            return result;
        }

        Interlocked.Increment(ref _misses);
        return null;
    }

    /// <summary>Keeps a result; one larger than the whole capacity is not kept.</summary>
    /// <param name="key">The key.</param>
    /// <param name="result">The result.</param>
    /// <param name="ttl">How long.</param>
    public void Set(string key, CachedResult result, TimeSpan ttl)
    {
        ArgumentNullException.ThrowIfNull(result);
        _results.Set(key, result, new MemoryCacheEntryOptions { Size = result.Size, AbsoluteExpirationRelativeToNow = ttl });
        Interlocked.Increment(ref _stored);
    }

    /// <inheritdoc />
    public void Dispose() => _results.Dispose();

    private sealed class Clock(TimeProvider time) : Microsoft.Extensions.Internal.ISystemClock
    {
        public DateTimeOffset UtcNow => time.GetUtcNow();
    }
}
