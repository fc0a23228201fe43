using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>The JSON type of a host.json key, which decides how its text is parsed and shown.</summary>
public enum HostJsonKind
{
    /// <summary>One of an enum's names, camelCase.</summary>
    Name,
    /// <summary>true or false.</summary>
    Boolean,
    /// <summary>A whole number.</summary>
    WholeNumber,
    /// <summary>A number.</summary>
    Number,
    /// <summary>A time span, [d.]hh:mm:ss[.fffffff].</summary>
    TimeSpan,
    /// <summary>An array of strings.</summary>
    Strings,
    /// <summary>A string.</summary>
    Text,
    /// <summary>An object that maps function names to <see cref="FunctionResultOptions"/>.</summary>
    FunctionMap,
}

/// <summary>
/// One key of <c>extensions.faasCache</c>: its path, type, what is allowed, its default (read from a new
/// <see cref="FaaSCacheOptions"/>), what it does, and how it reaches the options. The reader, the validator, the
/// start-up log's JSON and <c>docs/configuration.md</c> all come from <see cref="HostJsonKeys.All"/>.
/// </summary>
public sealed class HostJsonKey
{
    /// <summary>Gets the path below the section, segments joined by ':' (<c>eviction:ttl</c>).</summary>
    public required string Path { get; init; }

    /// <summary>Gets the JSON type.</summary>
    public required HostJsonKind Kind { get; init; }

    /// <summary>Gets a value indicating whether JSON null (or "") is a value of its own (not set).</summary>
    public bool Nullable { get; init; }

    /// <summary>Gets the message's "allowed values are ..." text.</summary>
    public required string Allowed { get; init; }

    /// <summary>Gets what the key does and the values it takes, for the documentation.</summary>
    public required string Description { get; init; }

    /// <summary>Gets the default as the documentation says it, where the default value alone does not say it.</summary>
    public string? DefaultText { get; init; }

    /// <summary>Gets the enum's values (for <see cref="HostJsonKind.Name"/>).</summary>
    public IReadOnlyList<Enum> Names { get; init; } = [];

    /// <summary>Gets the value from options.</summary>
    public required Func<FaaSCacheOptions, object?> Get { get; init; }

    /// <summary>Gets the setter.</summary>
    public required Action<FaaSCacheOptions, object?> Set { get; init; }

    /// <summary>Gets the range check of one value (true for every value where none is given).</summary>
    public Func<object?, bool> IsValid { get; init; } = _ => true;

    /// <summary>Gets a rule across keys: the "allowed values" text when the options break it, else null.</summary>
    public Func<FaaSCacheOptions, string, string?>? Across { get; init; }

    /// <summary>Gets the last segment of <see cref="Path"/>.</summary>
    public string Name => Path[(Path.LastIndexOf(':') + 1)..];

    /// <summary>Gets the group (<c>eviction</c>), or "" for a key at the section's top.</summary>
    public string Group => Path.Contains(':', StringComparison.Ordinal) ? Path[..Path.IndexOf(':', StringComparison.Ordinal)] : string.Empty;

    /// <summary>The value as host.json writes it (null for null): enums by their camelCase names, time spans "c".</summary>
    /// <param name="value">A value of this key's type.</param>
    /// <returns>The text.</returns>
    public string? Format(object? value) => value switch
    {
        null => null,
        Enum e => R.Name(e),
        bool b => b ? "true" : "false",
        TimeSpan t => R.Format(t),
        long l => R.Format(l),
        int i => i.ToString(CultureInfo.InvariantCulture),
        double d => R.Format(d),
        IEnumerable<string> items => "[" + string.Join(", ", items) + "]",
        string text when Kind == HostJsonKind.Text => ResultCacheOptions.Redact(text),
        _ => Convert.ToString(value, CultureInfo.InvariantCulture),
    };
}

/// <summary>Every key of <c>extensions.faasCache</c>, in the order the documentation, the log and the messages list them.</summary>
public static class HostJsonKeys
{
    /// <summary>The groups (objects) of the section, each with its options object.</summary>
    public static readonly IReadOnlyDictionary<string, Func<FaaSCacheOptions, object?>> Groups = new Dictionary<string, Func<FaaSCacheOptions, object?>>
    {
        [R.Eviction] = o => o.Eviction,
        [R.Prewarm] = o => o.Prewarm,
        [R.Scaling] = o => o.Scaling,
        [R.Membership] = o => o.Membership,
        [R.Results] = o => o.Results,
    };

    /// <summary>Every key.</summary>
    public static readonly IReadOnlyList<HostJsonKey> All =
    [
        Name<ConsistencyPreset>(R.Consistency, o => o.Consistency, (o, v) => o.Consistency = (ConsistencyPreset)v!,
            "the paper's Table 3: where reads and writes go ([consistency.md](consistency.md))"),
        Name<PersistMode>(R.Persist, o => o.Persist, (o, v) => o.Persist = (PersistMode?)v,
            "how writes reach storage; `strong` requires `sync`", nullable: true,
            across: (o, prefix) => R.IsValidPersistFor(o.Consistency, o.Persist) ? null : R.AllowedPersistWithStrong(prefix),
            defaultText: "`async` for the `*Async` presets, else `sync`"),
        Name<EvictionPolicy>("eviction:policy", o => o.Eviction.Policy, (o, v) => o.Eviction.Policy = (EvictionPolicy)v!,
            "`lru` (non-owned first) or `size` (non-owned large, non-owned small, owned large, owned small)"),
        Key("eviction:sizeThresholdBytes", HostJsonKind.WholeNumber, o => o.Eviction.SizeThresholdBytes, (o, v) => o.Eviction.SizeThresholdBytes = (long)v!,
            R.AllowedSizeThresholdBytes, "the size policy's line between small and large objects", v => R.IsValidSizeThresholdBytes((long)v!)),
        Key("eviction:ttl", HostJsonKind.TimeSpan, o => o.Eviction.Ttl, (o, v) => o.Eviction.Ttl = (TimeSpan?)v,
            R.AllowedTtl, "a time-to-live from when the object was cached", v => R.IsValidTtl((TimeSpan?)v), nullable: true),
        Key(R.MemoryHeadroomPercent, HostJsonKind.WholeNumber, o => o.MemoryHeadroomPercent, (o, v) => o.MemoryHeadroomPercent = checked((int)(long)v!),
            R.AllowedMemoryHeadroomPercent, "the Memory Daemon (§3.4) evicts when function memory plus cached bytes come within this percentage of the memory limit",
            v => R.IsValidMemoryHeadroomPercent((int)v!)),
        Key(R.MemoryLimitBytes, HostJsonKind.WholeNumber, o => o.MemoryLimitBytes, (o, v) => o.MemoryLimitBytes = (long?)v,
            R.AllowedMemoryLimitBytes, "the app's memory limit the Memory Daemon watches", v => R.IsValidMemoryLimitBytes((long?)v), nullable: true,
            defaultText: "null: the host's cgroup v2 `memory.max`, else the machine's MemTotal"),
        Key(R.CapacityBytes, HostJsonKind.WholeNumber, o => o.CapacityBytes, (o, v) => o.CapacityBytes = (long?)v,
            R.AllowedCapacityBytes, "the cache's capacity", v => R.IsValidCapacityBytes((long?)v), nullable: true,
            defaultText: "null: a quarter of the memory available to the process, at least 64 MiB"),
        Key(R.DoNotCache, HostJsonKind.Strings, o => o.DoNotCache, (o, v) => o.DoNotCache = (List<string>)v!,
            R.AllowedDoNotCache, "keys never cached, globs over `container/blob`: `*` within one path segment, `**` across segments, `?` one character"),
        Key(R.SdkEndpoint, HostJsonKind.Boolean, o => o.SdkEndpoint, (o, v) => o.SdkEndpoint = (bool)v!,
            R.AllowedBoolean, "serve the Blob REST API on a loopback port and point the workers' connection strings at it, so storage SDK calls and SDK-type bindings go through the cache ([sdk-endpoint.md](sdk-endpoint.md))"),
        Key("prewarm:enabled", HostJsonKind.Boolean, o => o.Prewarm.Enabled, (o, v) => o.Prewarm.Enabled = (bool)v!,
            R.AllowedBoolean, "an unload writes this instance's snapshot, and the Load Daemon pre-warms at start (§3.3; [prewarm-and-memory.md](prewarm-and-memory.md))"),
        Key("prewarm:hitRateThreshold", HostJsonKind.Number, o => o.Prewarm.HitRateThreshold, (o, v) => o.Prewarm.HitRateThreshold = (double)v!,
            R.AllowedHitRateThreshold, "an object whose hit rate (hits over reads, own and peer) across the merged snapshots is above it is loaded; objects accessed more than once are loaded regardless",
            v => R.IsValidHitRateThreshold((double)v!)),
        Key("scaling:compute", HostJsonKind.Boolean, o => o.Scaling.Compute, (o, v) => o.Scaling.Compute = (bool)v!,
            R.AllowedBoolean, "the compute voter (§4): in-flight invocations and rate x latency against `targetConcurrency` per instance, and `targetLatency`"),
        Key("scaling:cacheSize", HostJsonKind.Boolean, o => o.Scaling.CacheSize, (o, v) => o.Scaling.CacheSize = (bool)v!,
            R.AllowedBoolean, "the cache-size voter (§4): out if an object was evicted more than once since the last query, or if objects the Memory Daemon evicted were read again; in below `lowAccessRate`"),
        Key("scaling:bandwidth", HostJsonKind.Boolean, o => o.Scaling.Bandwidth, (o, v) => o.Scaling.Bandwidth = (bool)v!,
            R.AllowedBoolean, "the bandwidth voter and bandwidth-scaled loads of misses of 2 MiB and more (§4)"),
        Key("scaling:targetConcurrency", HostJsonKind.WholeNumber, o => o.Scaling.TargetConcurrency, (o, v) => o.Scaling.TargetConcurrency = checked((int)(long)v!),
            R.AllowedTargetConcurrency, "in-flight invocations per instance the compute voter aims for", v => R.IsValidTargetConcurrency((int)v!)),
        Key("scaling:targetLatency", HostJsonKind.TimeSpan, o => o.Scaling.TargetLatency, (o, v) => o.Scaling.TargetLatency = (TimeSpan?)v,
            R.AllowedTargetLatency, "a mean latency above which a busy instance votes out", v => R.IsValidTargetLatency((TimeSpan?)v), nullable: true),
        Key("scaling:lowAccessRate", HostJsonKind.Number, o => o.Scaling.LowAccessRate, (o, v) => o.Scaling.LowAccessRate = (double)v!,
            R.AllowedLowAccessRate, "accesses per second below which the cache-size voter votes in", v => R.IsValidLowAccessRate((double)v!)),
        Key("scaling:profileInterval", HostJsonKind.TimeSpan, o => o.Scaling.ProfileInterval, (o, v) => o.Scaling.ProfileInterval = (TimeSpan)v!,
            R.AllowedProfileInterval, "how often BW_BS and BW_Inst are probed when no transfer measured them lately", v => R.IsValidProfileInterval((TimeSpan)v!)),
        Key("membership:heartbeatInterval", HostJsonKind.TimeSpan, o => o.Membership.HeartbeatInterval, (o, v) => o.Membership.HeartbeatInterval = (TimeSpan)v!,
            R.AllowedHeartbeatInterval, "how often a member renews its entry in the membership blob", v => R.IsValidHeartbeatInterval((TimeSpan)v!)),
        Key("membership:failureTimeout", HostJsonKind.TimeSpan, o => o.Membership.FailureTimeout, (o, v) => o.Membership.FailureTimeout = (TimeSpan)v!,
            R.AllowedFailureTimeoutFormat, "how old a heartbeat may be before the member is removed",
            across: (o, prefix) => !R.IsValidHeartbeatInterval(o.Membership.HeartbeatInterval) || R.IsValidFailureTimeout(o.Membership.FailureTimeout, o.Membership.HeartbeatInterval)
                ? null
                : R.AllowedFailureTimeout(prefix, o.Membership.HeartbeatInterval)),
        Key("membership:virtualNodes", HostJsonKind.WholeNumber, o => o.Membership.VirtualNodes, (o, v) => o.Membership.VirtualNodes = checked((int)(long)v!),
            R.AllowedVirtualNodes, "virtual nodes per member on the ring", v => R.IsValidVirtualNodes((int)v!)),
        Key("membership:watchInterval", HostJsonKind.TimeSpan, o => o.Membership.WatchInterval, (o, v) => o.Membership.WatchInterval = (TimeSpan)v!,
            R.AllowedWatchInterval, "how often a member asks, between heartbeats, whether the list changed (one conditional GET, a 304 when not)",
            v => R.IsValidWatchInterval((TimeSpan)v!)),
        Name<ResultLocation>("results:location", o => o.Results.Location, (o, v) => o.Results.Location = (ResultLocation)v!,
            "where cached function results live unless a function says: `local` (this instance), `cluster` (the key's owner on the ring), `redis` ([results.md](results.md))"),
        Key("results:redis", HostJsonKind.Text, o => o.Results.Redis, (o, v) => o.Results.Redis = (string?)v,
            R.AllowedRedis, "the Redis connection string for results whose location is `redis`", nullable: true,
            across: (o, prefix) => R.RedisRequired(o.Results, prefix)),
        Key("results:capacityBytes", HostJsonKind.WholeNumber, o => o.Results.CapacityBytes, (o, v) => o.Results.CapacityBytes = (long)v!,
            R.AllowedResultCapacityBytes, "the bytes of results this instance keeps (its local results and the cluster results it owns)",
            v => R.IsValidResultCapacityBytes((long)v!)),
        Key("results:functions", HostJsonKind.FunctionMap, o => o.Results.Functions, (o, v) => o.Results.Functions = (Dictionary<string, FunctionResultOptions>)v!,
            R.AllowedResultFunctions,
            "the functions whose results are cached, by name: `key` (the request parts that make the key: `body`, `method`, `json:<property path>`, `query:<name>`, `route:<name>`, `header:<name>`; default `[\"body\"]`; the versions of the function's blob inputs always count), `ttl` (default 00:10:00), `maxBytes` (the largest body kept, default 1048576), `location` (default: `results.location`), `skipOutputs` (a function with output bindings may be answered without running: a hit writes nothing; default false)"),
    ];

    /// <summary>The names one level below <paramref name="group"/> ("" for the top), in table order.</summary>
    /// <param name="group">The group, or "".</param>
    /// <returns>The names.</returns>
    public static string[] NamesIn(string group) =>
        group.Length == 0
            ? [.. All.Select(k => k.Group.Length == 0 ? k.Name : k.Group).Distinct()]
            : [.. All.Where(k => k.Group == group).Select(k => k.Name)];

    /// <summary>The key at <paramref name="path"/> (segments joined by ':'), or null.</summary>
    /// <param name="path">The path below the section.</param>
    /// <returns>The key.</returns>
    public static HostJsonKey? Find(string path) => All.FirstOrDefault(k => string.Equals(k.Path, path, StringComparison.Ordinal));

    /// <summary>
    /// Every range and cross-key rule, in table order. <paramref name="given"/> maps full keys to the text the user
    /// wrote, so the messages quote it; values without an entry are shown formatted.
    /// </summary>
    /// <param name="options">The options.</param>
    /// <param name="prefix">The section's path (<c>extensions:faasCache</c>).</param>
    /// <param name="given">The text given per full key, if read from a file.</param>
    /// <returns>One exception per broken rule.</returns>
    public static IEnumerable<FaaSCacheConfigurationException> Check(
        FaaSCacheOptions options, string prefix, IReadOnlyDictionary<string, string?>? given = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        FaaSCacheConfigurationException Error(string key, string? formatted, string allowed) => Failure(given, key, formatted, allowed);

        var missingGroups = new HashSet<string>(StringComparer.Ordinal);
        foreach (HostJsonKey key in All)
        {
            if (key.Group.Length > 0 && Groups[key.Group](options) is null)
            {
                if (missingGroups.Add(key.Group))
                {
                    yield return Error(R.Join(prefix, key.Group), null, R.AllowedObject(NamesIn(key.Group)));
                }

                continue;
            }

            string path = R.Join(prefix, key.Path);
            object? value = key.Get(options);
            if (key.Kind == HostJsonKind.Strings)
            {
                if (value is not IList<string> items)
                {
                    yield return Error(path, null, key.Allowed);
                    continue;
                }

                for (int i = 0; i < items.Count; i++)
                {
                    if (!R.IsValidGlob(items[i]))
                    {
                        yield return Error(R.Join(path, i.ToString(CultureInfo.InvariantCulture)), items[i], R.AllowedGlob);
                    }
                }
            }
            else if (key.Kind == HostJsonKind.FunctionMap)
            {
                foreach (FaaSCacheConfigurationException error in CheckFunctions(value as IReadOnlyDictionary<string, FunctionResultOptions>, path, given))
                {
                    yield return error;
                }
            }
            else if (value is Enum e && !Enum.IsDefined(e.GetType(), e))
            {
                yield return Error(path, key.Format(value), key.Allowed);
            }
            else if (!key.IsValid(value))
            {
                yield return Error(path, key.Format(value), key.Allowed);
            }
            else if (key.Across?.Invoke(options, prefix) is { } allowed)
            {
                yield return Error(path, key.Format(value), allowed);
            }
        }
    }

    /// <summary>A broken rule's exception, quoting what the user wrote for the key when it was read from a file.</summary>
    private static FaaSCacheConfigurationException Failure(IReadOnlyDictionary<string, string?>? given, string key, string? formatted, string allowed) =>
        new(key, given is not null && given.TryGetValue(key, out string? text) ? text : formatted, allowed);

    /// <summary>The rules of each function's result caching: its key parts, ttl, maxBytes and location.</summary>
    private static IEnumerable<FaaSCacheConfigurationException> CheckFunctions(
        IReadOnlyDictionary<string, FunctionResultOptions>? functions, string path, IReadOnlyDictionary<string, string?>? given)
    {
        FaaSCacheConfigurationException Error(string key, string? formatted, string allowed) => Failure(given, key, formatted, allowed);

        if (functions is null)
        {
            yield return Error(path, null, R.AllowedResultFunctions);
            yield break;
        }

        foreach ((string name, FunctionResultOptions? function) in functions)
        {
            string at = R.Join(path, name);
            if (function is null)
            {
                yield return Error(at, null, R.AllowedResultFunctions);
                continue;
            }

            if (function.Key is null || function.Key.Count == 0)
            {
                yield return Error(R.Join(at, "key"), function.Key is null ? null : "[]", "allowed values are non-empty arrays of key parts (" + ResultKeyPart.Allowed["allowed values are ".Length..] + ")");
            }
            else
            {
                for (int i = 0; i < function.Key.Count; i++)
                {
                    if (!ResultKeyPart.TryParse(function.Key[i], out _))
                    {
                        yield return Error(R.Join(at, "key", i.ToString(CultureInfo.InvariantCulture)), function.Key[i], ResultKeyPart.Allowed);
                    }
                }
            }

            if (function.Ttl <= TimeSpan.Zero)
            {
                yield return Error(R.Join(at, "ttl"), R.Format(function.Ttl), R.AllowedResultTtl);
            }

            if (function.MaxBytes < 1)
            {
                yield return Error(R.Join(at, "maxBytes"), R.Format(function.MaxBytes), R.AllowedResultMaxBytes);
            }

            if (function.Location is { } location && !Enum.IsDefined(location))
            {
                yield return Error(R.Join(at, "location"), R.Name(location), R.AllowedEnum<ResultLocation>() + " or null");
            }
        }
    }

    /// <summary>The documentation's table of every key (<c>docs/configuration.md</c> holds it; a test compares).</summary>
    /// <returns>Markdown.</returns>
    public static string Markdown()
    {
        var defaults = new FaaSCacheOptions();
        var page = new StringBuilder("| key | values | default |\n|---|---|---|\n");
        foreach (HostJsonKey key in All)
        {
            string values = key.Kind == HostJsonKind.Name ? ValuesOf(key) : AllowedValues(key.Allowed);
            string shown = key.DefaultText ?? Shown(key, key.Get(defaults));
            page.Append(CultureInfo.InvariantCulture, $"| `{key.Path.Replace(':', '.')}` | {key.Description}. {values} | {shown} |\n");
        }

        return page.ToString();
    }

    private static string ValuesOf(HostJsonKey key) =>
        "Values: " + string.Join(", ", key.Names.Select(n => $"`{R.Name(n)}`")) + (key.Nullable ? ", or null" : string.Empty) + ".";

    private static string AllowedValues(string allowed) =>
        "Values: " + (allowed.StartsWith("allowed values are ", StringComparison.Ordinal) ? allowed["allowed values are ".Length..] : allowed) + ".";

    private static string Shown(HostJsonKey key, object? value) => value switch
    {
        null => "null",
        Enum => $"`{key.Format(value)}`",
        IEnumerable<string> items when !items.Any() => "`[]`",
        System.Collections.IDictionary { Count: 0 } => "`{}`",
        _ => key.Format(value)!,
    };

    private static HostJsonKey Name<TEnum>(
        string path,
        Func<FaaSCacheOptions, object?> get,
        Action<FaaSCacheOptions, object?> set,
        string description,
        bool nullable = false,
        Func<FaaSCacheOptions, string, string?>? across = null,
        string? defaultText = null)
        where TEnum : struct, Enum => new()
        {
            Path = path,
            Kind = HostJsonKind.Name,
            Nullable = nullable,
            Allowed = R.AllowedEnum<TEnum>() + (nullable ? " or null" : string.Empty),
            Description = description,
            DefaultText = defaultText,
            Names = [.. Enum.GetValues<TEnum>().Cast<Enum>()],
            Get = get,
            Set = set,
            Across = across,
        };

    private static HostJsonKey Key(
        string path,
        HostJsonKind kind,
        Func<FaaSCacheOptions, object?> get,
        Action<FaaSCacheOptions, object?> set,
        string allowed,
        string description,
        Func<object?, bool>? isValid = null,
        bool nullable = false,
        Func<FaaSCacheOptions, string, string?>? across = null,
        string? defaultText = null) => new()
        {
            Path = path,
            Kind = kind,
            Nullable = nullable,
            Allowed = allowed,
            Description = description,
            DefaultText = defaultText,
            Get = get,
            Set = set,
            IsValid = isValid ?? (_ => true),
            Across = across,
        };
}
