using StackExchange.Redis;

namespace FaaSCache.Host.ResultCaching;

/// <summary>
/// Results in Redis (location <c>redis</c>): one string per result, under the app's prefix, with the result's time-to-live
/// as Redis's own expiry. A Redis that does not answer is a miss (the function runs) and a store that fails is dropped;
/// both are logged, with the server named, and the connection keeps retrying in the background.
/// </summary>
internal sealed class RedisResultStore(string connection, string prefix, ILogger logger) : IResultStore, IAsyncDisposable
{
    private readonly Lazy<Task<ConnectionMultiplexer>> _connection = new(() => ConnectAsync(connection, logger));

    /// <summary>Starts connecting (the first lookup would otherwise wait for it); a failure is logged, not thrown.</summary>
    public void Connect() => _ = _connection.Value;

    public async Task<CachedResult?> GetAsync(string key, CancellationToken cancellationToken)
    {
        try
        {
            IDatabase db = (await _connection.Value.ConfigureAwait(false)).GetDatabase();
            RedisValue value = await db.StringGetAsync(prefix + key).WaitAsync(cancellationToken).ConfigureAwait(false);
            return value.IsNull ? null : CachedResult.Decode((byte[])value!);
        }
        catch (Exception e) when (e is RedisException or TimeoutException or FormatException)
        {
            logger.LogWarning("Result caching: Redis ({Server}) did not answer the lookup of {Key} ({Reason}); the function runs", Server, key, e.Message);
            return null;
        }
    }

    public async Task SetAsync(string key, CachedResult result, TimeSpan ttl, CancellationToken cancellationToken)
    {
        try
        {
            IDatabase db = (await _connection.Value.ConfigureAwait(false)).GetDatabase();
            await db.StringSetAsync(prefix + key, result.Encode(), ttl).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RedisException or TimeoutException)
        {
            logger.LogWarning("Result caching: Redis ({Server}) did not keep {Key} ({Reason})", Server, key, e.Message);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_connection.IsValueCreated)
        {
            await (await _connection.Value.ConfigureAwait(false)).DisposeAsync().ConfigureAwait(false);
        }
    }

    private string Server => FaaSCache.Options.ResultCacheOptions.Redact(connection);

    private static async Task<ConnectionMultiplexer> ConnectAsync(string connection, ILogger logger)
    {
        ConfigurationOptions options = ConfigurationOptions.Parse(connection);
        options.AbortOnConnectFail = false; // keep trying in the background: results degrade, the app keeps running
        options.ConnectTimeout = Math.Min(options.ConnectTimeout, 2000);
        options.SyncTimeout = Math.Min(options.SyncTimeout, 2000);
        options.AsyncTimeout = Math.Min(options.AsyncTimeout, 2000);
        ConnectionMultiplexer redis = await ConnectionMultiplexer.ConnectAsync(options).ConfigureAwait(false);
        if (!redis.IsConnected)
        {
            logger.LogError(
                "Result caching: Redis ({Server}) does not answer; functions whose results live there run every time until it does",
                FaaSCache.Options.ResultCacheOptions.Redact(connection));
        }

        return redis;
    }
}
