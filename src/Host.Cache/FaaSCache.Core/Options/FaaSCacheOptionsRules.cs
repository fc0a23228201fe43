using System.Globalization;
using System.Text.Json;

namespace FaaSCache.Options;

/// <summary>
/// The one set of key names, ranges and "allowed" texts for <see cref="FaaSCacheOptions"/>, shared by
/// <see cref="FaaSCacheOptionsReader"/> (host.json) and <see cref="FaaSCacheOptionsValidator"/> (options built in code).
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
    public const string Policy = "policy";
    public const string SizeThresholdBytes = "sizeThresholdBytes";
    public const string Ttl = "ttl";
    public const string Enabled = "enabled";
    public const string HitRateThreshold = "hitRateThreshold";
    public const string Compute = "compute";
    public const string CacheSize = "cacheSize";
    public const string TargetConcurrency = "targetConcurrency";
    public const string TargetLatency = "targetLatency";
    public const string LowAccessRate = "lowAccessRate";
    public const string ProfileInterval = "profileInterval";
    public const string Bandwidth = "bandwidth";
    public const string HeartbeatInterval = "heartbeatInterval";
    public const string FailureTimeout = "failureTimeout";
    public const string VirtualNodes = "virtualNodes";
    public const string WatchInterval = "watchInterval";

    public static readonly string[] RootKeys =
        [Consistency, Persist, Eviction, MemoryHeadroomPercent, MemoryLimitBytes, CapacityBytes, DoNotCache, SdkEndpoint, Prewarm, Scaling, Membership];
    public static readonly string[] EvictionKeys = [Policy, SizeThresholdBytes, Ttl];
    public static readonly string[] PrewarmKeys = [Enabled, HitRateThreshold];
    public static readonly string[] ScalingKeys = [Compute, CacheSize, Bandwidth, TargetConcurrency, TargetLatency, LowAccessRate, ProfileInterval];
    public static readonly string[] MembershipKeys = [HeartbeatInterval, FailureTimeout, VirtualNodes, WatchInterval];

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

    public static bool IsValidGlob(string? value) => !string.IsNullOrWhiteSpace(value);

    /// <summary><c>strong</c> reads check the version in storage, so its writes must reach storage before they return.</summary>
    public static bool IsValidPersistFor(ConsistencyPreset consistency, PersistMode? persist) =>
        !Enum.IsDefined(consistency) || !ConsistencyPolicy.For(consistency).AllowsOnlySyncPersist || persist is null or PersistMode.Sync;

    /// <summary>
    /// Every range and cross-field rule, in schema order. <paramref name="given"/> maps full keys to the text
    /// the user wrote, so the messages quote it; values without an entry are shown formatted.
    /// </summary>
    public static IEnumerable<FaaSCacheConfigurationException> Check(
        FaaSCacheOptions options, string prefix, IReadOnlyDictionary<string, string?>? given = null)
    {
        ArgumentNullException.ThrowIfNull(options);

        string? Shown(string key, string? formatted) => given is not null && given.TryGetValue(key, out string? text) ? text : formatted;
        FaaSCacheConfigurationException Error(string key, string? formatted, string allowed) => new(key, Shown(key, formatted), allowed);

        string key = Join(prefix, Consistency);
        if (!Enum.IsDefined(options.Consistency))
        {
            yield return Error(key, Name(options.Consistency), AllowedEnum<ConsistencyPreset>());
        }

        key = Join(prefix, Persist);
        if (options.Persist is { } persist && !Enum.IsDefined(persist))
        {
            yield return Error(key, Name(persist), AllowedEnum<PersistMode>());
        }
        else if (!IsValidPersistFor(options.Consistency, options.Persist))
        {
            yield return Error(key, options.Persist is { } p ? Name(p) : null, AllowedPersistWithStrong(prefix));
        }

        key = Join(prefix, Eviction);
        if (options.Eviction is null)
        {
            yield return Error(key, null, AllowedObject(EvictionKeys));
        }
        else
        {
            EvictionOptions eviction = options.Eviction;
            key = Join(prefix, Eviction, Policy);
            if (!Enum.IsDefined(eviction.Policy))
            {
                yield return Error(key, Name(eviction.Policy), AllowedEnum<EvictionPolicy>());
            }

            key = Join(prefix, Eviction, SizeThresholdBytes);
            if (!IsValidSizeThresholdBytes(eviction.SizeThresholdBytes))
            {
                yield return Error(key, Format(eviction.SizeThresholdBytes), AllowedSizeThresholdBytes);
            }

            key = Join(prefix, Eviction, Ttl);
            if (!IsValidTtl(eviction.Ttl))
            {
                yield return Error(key, Format(eviction.Ttl), AllowedTtl);
            }
        }

        key = Join(prefix, MemoryHeadroomPercent);
        if (!IsValidMemoryHeadroomPercent(options.MemoryHeadroomPercent))
        {
            yield return Error(key, Format(options.MemoryHeadroomPercent), AllowedMemoryHeadroomPercent);
        }

        key = Join(prefix, MemoryLimitBytes);
        if (!IsValidMemoryLimitBytes(options.MemoryLimitBytes))
        {
            yield return Error(key, Format(options.MemoryLimitBytes), AllowedMemoryLimitBytes);
        }

        key = Join(prefix, CapacityBytes);
        if (!IsValidCapacityBytes(options.CapacityBytes))
        {
            yield return Error(key, Format(options.CapacityBytes), AllowedCapacityBytes);
        }

        key = Join(prefix, DoNotCache);
        if (options.DoNotCache is null)
        {
            yield return Error(key, null, AllowedDoNotCache);
        }
        else
        {
            for (int i = 0; i < options.DoNotCache.Count; i++)
            {
                key = Join(prefix, DoNotCache, i.ToString(CultureInfo.InvariantCulture));
                if (!IsValidGlob(options.DoNotCache[i]))
                {
                    yield return Error(key, options.DoNotCache[i], AllowedGlob);
                }
            }
        }

        key = Join(prefix, Prewarm);
        if (options.Prewarm is null)
        {
            yield return Error(key, null, AllowedObject(PrewarmKeys));
        }
        else if (!IsValidHitRateThreshold(options.Prewarm.HitRateThreshold))
        {
            key = Join(prefix, Prewarm, HitRateThreshold);
            yield return Error(key, Format(options.Prewarm.HitRateThreshold), AllowedHitRateThreshold);
        }

        if (options.Scaling is null)
        {
            key = Join(prefix, Scaling);
            yield return Error(key, null, AllowedObject(ScalingKeys));
        }
        else
        {
            ScalingOptions scaling = options.Scaling;
            if (!IsValidTargetConcurrency(scaling.TargetConcurrency))
            {
                yield return Error(Join(prefix, Scaling, TargetConcurrency), Format(scaling.TargetConcurrency), AllowedTargetConcurrency);
            }

            if (!IsValidTargetLatency(scaling.TargetLatency))
            {
                yield return Error(Join(prefix, Scaling, TargetLatency), Format(scaling.TargetLatency), AllowedTargetLatency);
            }

            if (!IsValidLowAccessRate(scaling.LowAccessRate))
            {
                yield return Error(Join(prefix, Scaling, LowAccessRate), Format(scaling.LowAccessRate), AllowedLowAccessRate);
            }

            if (!IsValidProfileInterval(scaling.ProfileInterval))
            {
                yield return Error(Join(prefix, Scaling, ProfileInterval), Format(scaling.ProfileInterval), AllowedProfileInterval);
            }
        }

        key = Join(prefix, Membership);
        if (options.Membership is null)
        {
            yield return Error(key, null, AllowedObject(MembershipKeys));
        }
        else
        {
            MembershipOptions membership = options.Membership;
            key = Join(prefix, Membership, HeartbeatInterval);
            bool heartbeatValid = IsValidHeartbeatInterval(membership.HeartbeatInterval);
            if (!heartbeatValid)
            {
                yield return Error(key, Format(membership.HeartbeatInterval), AllowedHeartbeatInterval);
            }

            key = Join(prefix, Membership, FailureTimeout);
            if (heartbeatValid && !IsValidFailureTimeout(membership.FailureTimeout, membership.HeartbeatInterval))
            {
                yield return Error(key, Format(membership.FailureTimeout), AllowedFailureTimeout(prefix, membership.HeartbeatInterval));
            }

            key = Join(prefix, Membership, VirtualNodes);
            if (!IsValidVirtualNodes(membership.VirtualNodes))
            {
                yield return Error(key, Format(membership.VirtualNodes), AllowedVirtualNodes);
            }

            key = Join(prefix, Membership, WatchInterval);
            if (!IsValidWatchInterval(membership.WatchInterval))
            {
                yield return Error(key, Format(membership.WatchInterval), AllowedWatchInterval);
            }
        }
    }

    /// <summary>Joins configuration path segments with ':' (an empty prefix adds nothing).</summary>
    public static string Join(string prefix, params string[] segments)
    {
        IEnumerable<string> parts = string.IsNullOrEmpty(prefix) ? segments : segments.Prepend(prefix);
        return string.Join(':', parts);
    }

    /// <summary>The host.json (camelCase) name of an enum value.</summary>
    public static string Name<TEnum>(TEnum value)
        where TEnum : struct, Enum => JsonNamingPolicy.CamelCase.ConvertName(value.ToString());

    /// <summary>The enum value whose host.json name matches <paramref name="text"/> ignoring case; numbers are not names.</summary>
    public static bool TryParseName<TEnum>(string? text, out TEnum value)
        where TEnum : struct, Enum
    {
        foreach (TEnum candidate in Enum.GetValues<TEnum>())
        {
            if (string.Equals(Name(candidate), text, StringComparison.OrdinalIgnoreCase))
            {
                value = candidate;
                return true;
            }
        }

        value = default;
        return false;
    }

    public static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);

    public static string? Format(TimeSpan? value) => value is { } v ? Format(v) : null;

    public static string Format(long value) => value.ToString(CultureInfo.InvariantCulture);

    public static string? Format(long? value) => value is { } v ? Format(v) : null;

    public static string Format(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
