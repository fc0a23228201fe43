namespace FaaSCache.Options;

/// <summary>Where cached function results live (Rosa et al.: in process, out of process, over the network).</summary>
public enum ResultLocation
{
    /// <summary>This instance's memory: a hit costs no call at all.</summary>
    Local,
    /// <summary>The result key's owner on the cachelets' ring, as blobs are: every instance shares one copy.</summary>
    Cluster,
    /// <summary>A Redis server (<c>results.redis</c>): shared by every instance, and kept when they all unload.</summary>
    Redis,
}

/// <summary>
/// <c>extensions.faasCache.results</c>: per-function result caching (Rosa, Freitas, Simão). A function listed under
/// <c>functions</c> is answered from the cache, without running, when a request with the same key parts arrives and
/// the versions of its blob inputs are the ones the result was made from.
/// </summary>
public sealed class ResultCacheOptions
{
    /// <summary>Default <see cref="CapacityBytes"/>: 64 MiB.</summary>
    public const long DEFAULT_CAPACITY_BYTES = 64L << 20;

    /// <summary>Gets or sets where results live unless a function says otherwise.</summary>
    public ResultLocation Location { get; set; } = ResultLocation.Local;

    /// <summary>Gets or sets the Redis connection string (StackExchange.Redis's format, such as <c>localhost:6379</c>).</summary>
    public string? Redis { get; set; }

    /// <summary>Gets or sets the bytes of results this instance keeps (local results, and the cluster results it owns).</summary>
    public long CapacityBytes { get; set; } = DEFAULT_CAPACITY_BYTES;

    /// <summary>Gets or sets the functions whose results are cached, by name (ignoring case).</summary>
    public Dictionary<string, FunctionResultOptions> Functions { get; set; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether a result may live in Redis.</summary>
    public bool UsesRedis => Location == ResultLocation.Redis || Functions.Values.Any(f => f?.Location == ResultLocation.Redis);

    /// <summary>A connection string with its password (<c>password=...</c>) replaced by <c>***</c>, for logs and messages.</summary>
    /// <param name="connection">The connection string.</param>
    /// <returns>It, redacted.</returns>
    public static string Redact(string connection) =>
        System.Text.RegularExpressions.Regex.Replace(connection, "(password\\s*=\\s*)[^,;]*", "$1***", System.Text.RegularExpressions.RegexOptions.IgnoreCase);

    /// <summary>Where <paramref name="function"/>'s results live.</summary>
    /// <param name="function">A function's options.</param>
    /// <returns>Its location, else the app's.</returns>
    public ResultLocation LocationOf(FunctionResultOptions function) => function?.Location ?? Location;
}

/// <summary>One function's result caching: what makes the key, how long and how large a result is kept, where.</summary>
public sealed class FunctionResultOptions
{
    /// <summary>Default <see cref="Ttl"/>: 10 minutes.</summary>
    public static readonly TimeSpan DEFAULT_TTL = TimeSpan.FromMinutes(10);

    /// <summary>Default <see cref="MaxBytes"/>: 1 MiB.</summary>
    public const long DEFAULT_MAX_BYTES = 1L << 20;

    /// <summary>Gets or sets the parts of the request that make the key (<see cref="ResultKeyPart"/>); the versions of the function's blob inputs are always part of it.</summary>
    public IList<string> Key { get; set; } = ["body"];

    /// <summary>Gets or sets how long a result is kept.</summary>
    public TimeSpan Ttl { get; set; } = DEFAULT_TTL;

    /// <summary>Gets or sets the largest response body kept; a larger one is answered and not cached.</summary>
    public long MaxBytes { get; set; } = DEFAULT_MAX_BYTES;

    /// <summary>Gets or sets where this function's results live; null: the app's <see cref="ResultCacheOptions.Location"/>.</summary>
    public ResultLocation? Location { get; set; }

    /// <summary>
    /// Gets or sets a value indicating whether a function with output bindings may be answered from the cache (a hit
    /// writes no output and fires no trigger); without it, such a function is refused.
    /// </summary>
    public bool SkipOutputs { get; set; }
}

/// <summary>Which part of an HTTP request a result key takes.</summary>
public enum ResultKeySource
{
    /// <summary><c>body</c>: the whole body.</summary>
    Body,
    /// <summary><c>json:a.b</c>: a property of a JSON body, by its dotted path.</summary>
    Json,
    /// <summary><c>query:name</c>: a query parameter.</summary>
    Query,
    /// <summary><c>route:name</c>: a route parameter.</summary>
    Route,
    /// <summary><c>header:name</c>: a header (name ignoring case).</summary>
    Header,
    /// <summary><c>method</c>: the HTTP method.</summary>
    Method,
}

/// <summary>One part of a result key: <c>body</c>, <c>method</c>, <c>json:a.b</c>, <c>query:q</c>, <c>route:r</c> or <c>header:h</c>.</summary>
/// <param name="Source">The part of the request.</param>
/// <param name="Name">The property, parameter or header; "" for <c>body</c> and <c>method</c>.</param>
public readonly record struct ResultKeyPart(ResultKeySource Source, string Name)
{
    /// <summary>What a key part may be, for messages.</summary>
    public const string Allowed = "allowed values are body, method, json:<property path>, query:<name>, route:<name> and header:<name>";

    /// <summary>Parses a key part.</summary>
    /// <param name="text">The text, such as <c>query:size</c>.</param>
    /// <param name="part">The part.</param>
    /// <returns>Whether it is one.</returns>
    public static bool TryParse(string? text, out ResultKeyPart part)
    {
        part = default;
        if (string.IsNullOrWhiteSpace(text))
        {
            return false;
        }

        int colon = text.IndexOf(':', StringComparison.Ordinal);
        string kind = colon < 0 ? text : text[..colon];
        string name = colon < 0 ? string.Empty : text[(colon + 1)..];
        ResultKeySource? source = kind.ToLowerInvariant() switch
        {
            "body" => ResultKeySource.Body,
            "method" => ResultKeySource.Method,
            "json" => ResultKeySource.Json,
            "query" => ResultKeySource.Query,
            "route" => ResultKeySource.Route,
            "header" => ResultKeySource.Header,
            _ => null,
        };
        bool named = source is ResultKeySource.Json or ResultKeySource.Query or ResultKeySource.Route or ResultKeySource.Header;
        if (source is null || named != (name.Trim().Length > 0) || (!named && colon >= 0))
        {
            return false;
        }

        part = new ResultKeyPart(source.Value, name.Trim());
        return true;
    }

    /// <inheritdoc />
    public override string ToString() => Name.Length == 0
        ? Source.ToString().ToLowerInvariant()
        : string.Create(CultureInfo.InvariantCulture, $"{Source.ToString().ToLowerInvariant()}:{Name}");
}
