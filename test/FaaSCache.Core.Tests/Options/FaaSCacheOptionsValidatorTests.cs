using Microsoft.Extensions.Options;

namespace FaaSCache.Core.Tests.Options;

[Trait("Category", "Unit")]
public sealed class FaaSCacheOptionsValidatorTests
{
    private readonly FaaSCacheOptionsValidator _validator = new();

    [Fact]
    public void Default_options_are_valid()
    {
        ValidateOptionsResult result = _validator.Validate(Microsoft.Extensions.Options.Options.DefaultName, new FaaSCacheOptions());

        Assert.True(result.Succeeded, result.FailureMessage);
    }

    [Fact]
    public void Options_at_the_edges_of_every_range_are_valid()
    {
        var o = new FaaSCacheOptions
        {
            Consistency = ConsistencyPreset.LocalAsync,
            Persist = PersistMode.None,
            MemoryHeadroomPercent = 90,
            CapacityBytes = 1_048_576,
            DoNotCache = ["logs/*"],
        };
        o.Eviction.SizeThresholdBytes = 0;
        o.Eviction.Ttl = TimeSpan.FromTicks(1);
        o.Prewarm.HitRateThreshold = 0;
        o.Membership.HeartbeatInterval = TimeSpan.FromMilliseconds(1);
        o.Membership.FailureTimeout = TimeSpan.FromMilliseconds(2);
        o.Membership.VirtualNodes = 10_000;

        Assert.True(_validator.Validate(null, o).Succeeded);
    }

    public static TheoryData<string, Action<FaaSCacheOptions>, string, string> InvalidOptions => new()
    {
        { "consistency", o => o.Consistency = (ConsistencyPreset)42, "42", "strong, owner, ownerAsync, ownerLocalRead, local, localAsync" },
        { "persist", o => o.Persist = PersistMode.Async, "async", "'extensions:faasCache:consistency' is strong" },
        { "persist", o => (o.Consistency, o.Persist) = (ConsistencyPreset.Owner, (PersistMode)7), "7", "sync, async, none" },
        { "eviction:policy", o => o.Eviction.Policy = (EvictionPolicy)9, "9", "lru, size" },
        { "eviction:sizeThresholdBytes", o => o.Eviction.SizeThresholdBytes = -1, "-1", "at least 0" },
        { "eviction:ttl", o => o.Eviction.Ttl = TimeSpan.Zero, "00:00:00", "positive time spans" },
        { "memoryHeadroomPercent", o => o.MemoryHeadroomPercent = 95, "95", "whole numbers from 0 to 90" },
        { "memoryLimitBytes", o => o.MemoryLimitBytes = 1L << 20, "1048576", "at least 67108864 (64 MiB)" },
        { "capacityBytes", o => o.CapacityBytes = 1024, "1024", "at least 1048576" },
        { "doNotCache:1", o => o.DoNotCache = ["logs/*", ""], "", "non-empty strings" },
        { "prewarm:hitRateThreshold", o => o.Prewarm.HitRateThreshold = double.NaN, "NaN", "numbers from 0 to 1" },
        { "membership:heartbeatInterval", o => o.Membership.HeartbeatInterval = TimeSpan.FromSeconds(-1), "-00:00:01", "positive time spans" },
        { "membership:failureTimeout", o => o.Membership.FailureTimeout = TimeSpan.FromSeconds(5), "00:00:05", "greater than 'extensions:faasCache:membership:heartbeatInterval' (00:00:05)" },
        { "membership:virtualNodes", o => o.Membership.VirtualNodes = 0, "0", "whole numbers from 1 to 10000" },
        { "membership", o => o.Membership = null!, "null", "objects with the keys heartbeatInterval, failureTimeout, virtualNodes" },
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void An_out_of_range_value_fails_naming_the_key_the_value_and_what_is_allowed(string key, Action<FaaSCacheOptions> change, string value, string allowed)
    {
        var o = new FaaSCacheOptions();
        change(o);

        ValidateOptionsResult result = _validator.Validate(null, o);

        Assert.True(result.Failed);
        string failure = Assert.Single(result.Failures!);
        Assert.Contains($"'extensions:faasCache:{key}'", failure, StringComparison.Ordinal);
        Assert.Contains($"'{value}'", failure, StringComparison.Ordinal);
        Assert.Contains(allowed, failure, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_failure_is_reported_at_once()
    {
        var o = new FaaSCacheOptions { MemoryHeadroomPercent = 100, CapacityBytes = 1 };
        o.Membership.VirtualNodes = -3;

        ValidateOptionsResult result = _validator.Validate(null, o);

        Assert.Equal(3, result.Failures!.Count());
    }

    [Fact]
    public void The_validator_and_the_reader_give_the_same_message_for_the_same_value()
    {
        var o = new FaaSCacheOptions();
        o.Membership.VirtualNodes = 10_001;
        string fromValidator = Assert.Single(_validator.Validate(null, o).Failures!);

        var ex = Assert.Throws<FaaSCacheConfigurationException>(
            () => FaaSCacheOptionsReader.Read(OptionsJson.Body("""{ "membership": { "virtualNodes": 10001 } }""")));

        Assert.Equal(ex.Message, fromValidator);
    }

    [Fact]
    public void The_validator_runs_when_options_are_resolved_from_the_options_framework()
    {
        var factory = new OptionsFactory<FaaSCacheOptions>(
            [new ConfigureOptions<FaaSCacheOptions>(o => o.MemoryHeadroomPercent = 99)],
            [],
            [new FaaSCacheOptionsValidator()]);

        var ex = Assert.Throws<OptionsValidationException>(() => factory.Create(Microsoft.Extensions.Options.Options.DefaultName));

        Assert.Contains("'extensions:faasCache:memoryHeadroomPercent'", ex.Message, StringComparison.Ordinal);
    }
}
