namespace FaaSCache.Options;

/// <summary>
/// The ranges and "allowed" texts behind <see cref="HostJsonKeys"/>, the one table of host.json keys from which
/// <see cref="FaaSCacheOptionsReader"/> (host.json), <see cref="FaaSCacheOptionsValidator"/> (options built in code),
/// the start-up log and the documentation come.
/// </summary>
internal static class FaaSCacheOptionsRules
{
    /// <summary>Where the section lives in host.json.</summary>
    public const string SectionPath = "extensions:" + FaaSCacheOptions.SectionName;

    public const string Consistency = "consistency";
    public const string Persist = "persist";
    public const string Eviction = "eviction";
    public const string MemoryHeadroomPercent = "memoryHeadroomPercent";
    public const string CapacityBytes = "capacityBytes";
    public const string MemoryLimitBytes = "memoryLimitBytes";
    public const string DoNotCache = "doNotCache";
    public const string SdkEndpoint = "sdkEndpoint";
    public const string Prewarm = "prewarm";
    public const string Scaling = "scaling";
    public const string Membership = "membership";
    public const string HeartbeatInterval = "heartbeatInterval";
    public const string Results = "results";

    public const int MinMemoryHeadroomPercent = 0;
    public const int MaxMemoryHeadroomPercent = 90;
    public const long MinCapacityBytes = 1L << 20;
    public const long MinMemoryLimitBytes = 64L << 20;
    public const long MinSizeThresholdBytes = 0;
    public const double MinHitRateThreshold = 0;
    public const double MaxHitRateThreshold = 1;
    public const int MinVirtualNodes = 1;
    public const int MaxVirtualNodes = 10_000;

    public const string AllowedMemoryHeadroomPercent = "allowed values are whole numbers from 0 to 90";
    public const string AllowedCapacityBytes = "allowed values are null (derive it from the memory available) or whole numbers of at least 1048576 (1 MiB)";
    public const string AllowedMemoryLimitBytes = "allowed values are null (the cgroup's memory.max, else the machine's memory) or whole numbers of at least 67108864 (64 MiB)";
    public const string AllowedSizeThresholdBytes = "allowed values are whole numbers of at least 0";
    public const string AllowedTtl = "allowed values are null (no time-to-live) or positive time spans such as 00:05:00";
    public const string AllowedHitRateThreshold = "allowed values are numbers from 0 to 1";
    public const string AllowedHeartbeatInterval = "allowed values are positive time spans such as 00:00:05";
    public const string AllowedFailureTimeoutFormat = "allowed values are time spans such as 00:00:15, greater than the heartbeat interval";
    public const string AllowedVirtualNodes = "allowed values are whole numbers from 1 to 10000";
    public const string AllowedWatchInterval = "allowed values are 00:00:00 (off: changes are seen at the next heartbeat) or positive time spans such as 00:00:01";
    public const string AllowedTargetConcurrency = "allowed values are whole numbers from 1 to 100000";
    public const string AllowedTargetLatency = "allowed values are null (latency does not vote) or positive time spans such as 00:00:00.500";
    public const string AllowedLowAccessRate = "allowed values are numbers of at least 0 (accesses per second)";
    public const string AllowedProfileInterval = "allowed values are time spans from 00:00:01 to 1.00:00:00";
    public const string AllowedResultCapacityBytes = "allowed values are whole numbers of at least 65536 (64 KiB)";
    public const string AllowedRedis = "allowed values are null or Redis connection strings such as localhost:6379";
    public const string AllowedResultFunctions = "allowed values are objects that map function names to objects with the keys key, ttl, maxBytes, location, skipOutputs";
    public const string AllowedResultTtl = "allowed values are positive time spans such as 00:10:00";
    public const string AllowedResultMaxBytes = "allowed values are whole numbers of at least 1";
    public const string AllowedBoolean = "allowed values are true and false";
    public const string AllowedGlob = "allowed values are non-empty strings (glob patterns such as logs/*)";
    public const string AllowedDoNotCache = "allowed values are arrays of non-empty strings (glob patterns such as logs/*)";

    /// <summary>"allowed values are a, b, c" for an enum, with the camelCase names used in host.json.</summary>
    public static string AllowedEnum<TEnum>()
        where TEnum : struct, Enum => "allowed values are " + string.Join(", ", Enum.GetValues<TEnum>().Select(v => Name(v)));

    /// <summary>The persist values allowed with <c>consistency: strong</c>.</summary>
    public static string AllowedPersistWithStrong(string prefix) =>
        $"allowed values are sync or null because '{Join(prefix, Consistency)}' is strong, which needs synchronous persistence";

    /// <summary>The failure timeouts allowed for a given heartbeat interval.</summary>
    public static string AllowedFailureTimeout(string prefix, TimeSpan heartbeatInterval) =>
        $"allowed values are time spans greater than '{Join(prefix, Membership, HeartbeatInterval)}' ({Format(heartbeatInterval)})";

    /// <summary>"allowed values are objects with the keys a, b, c".</summary>
    public static string AllowedObject(IEnumerable<string> keys) => "allowed values are objects with the keys " + string.Join(", ", keys);

    public static bool IsValidMemoryHeadroomPercent(int value) => value is >= MinMemoryHeadroomPercent and <= MaxMemoryHeadroomPercent;

    public static bool IsValidCapacityBytes(long? value) => value is null or >= MinCapacityBytes;

    public static bool IsValidMemoryLimitBytes(long? value) => value is null or >= MinMemoryLimitBytes;

    public static bool IsValidSizeThresholdBytes(long value) => value >= MinSizeThresholdBytes;

    public static bool IsValidTtl(TimeSpan? value) => value is null || value.Value > TimeSpan.Zero;

    // NaN fails both comparisons, so it is rejected too.
    public static bool IsValidHitRateThreshold(double value) => value is >= MinHitRateThreshold and <= MaxHitRateThreshold;

    public static bool IsValidHeartbeatInterval(TimeSpan value) => value > TimeSpan.Zero;

    public static bool IsValidFailureTimeout(TimeSpan value, TimeSpan heartbeatInterval) => value > heartbeatInterval;

    public static bool IsValidVirtualNodes(int value) => value is >= MinVirtualNodes and <= MaxVirtualNodes;

    public static bool IsValidWatchInterval(TimeSpan value) => value >= TimeSpan.Zero;

    public static bool IsValidTargetConcurrency(int value) => value is >= 1 and <= 100_000;

    public static bool IsValidTargetLatency(TimeSpan? value) => value is null || value.Value > TimeSpan.Zero;

    // NaN fails the comparison, so it is rejected too.
    public static bool IsValidLowAccessRate(double value) => value >= 0;

    public static bool IsValidProfileInterval(TimeSpan value) => value >= TimeSpan.FromSeconds(1) && value <= TimeSpan.FromDays(1);

    public static bool IsValidResultCapacityBytes(long value) => value >= 64 * 1024;

    /// <summary>The "allowed values" text when a location is redis and no connection string is set, else null.</summary>
    public static string? RedisRequired(ResultCacheOptions results, string prefix) =>
        results.UsesRedis && string.IsNullOrWhiteSpace(results.Redis)
            ? $"allowed values are Redis connection strings such as localhost:6379, required because '{Join(prefix, Results, "location")}' or a function's location is redis"
            : null;

    public static bool IsValidGlob(string? value) => !string.IsNullOrWhiteSpace(value);

    /// <summary><c>strong</c> reads check the version in storage, so its writes must reach storage before they return.</summary>
    public static bool IsValidPersistFor(ConsistencyPreset consistency, PersistMode? persist) =>
        !Enum.IsDefined(consistency) || !ConsistencyPolicy.For(consistency).AllowsOnlySyncPersist || persist is null or PersistMode.Sync;

    /// <summary>Joins configuration path segments with ':' (an empty prefix adds nothing).</summary>
    public static string Join(string prefix, params string[] segments)
    {
        IEnumerable<string> parts = string.IsNullOrEmpty(prefix) ? segments : segments.Prepend(prefix);
        return string.Join(':', parts);
    }

    /// <summary>The host.json (camelCase) name of an enum value.</summary>
    public static string Name<TEnum>(TEnum value)
        where TEnum : struct, Enum => JsonNamingPolicy.CamelCase.ConvertName(value.ToString());

    /// <summary>The host.json (camelCase) name of an enum value whose type is not known at compile time.</summary>
    public static string Name(Enum value) => JsonNamingPolicy.CamelCase.ConvertName(value.ToString());

    public static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);

    public static string? Format(TimeSpan? value) => value is { } v ? Format(v) : null;

    public static string Format(long value) => value.ToString(CultureInfo.InvariantCulture);

    public static string? Format(long? value) => value is { } v ? Format(v) : null;

    public static string Format(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
