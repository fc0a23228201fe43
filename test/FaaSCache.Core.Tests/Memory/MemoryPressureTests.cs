namespace FaaSCache.Core.Tests.Memory;

[Trait("Category", "Unit")]
public sealed class MemoryPressureTests
{
    private const long MiB = 1L << 20;

    private static MemorySample Sample(long function, long cached) => new(1000 * MiB, MemoryLimitSource.Configured, 0, function, 0, cached);

    [Fact]
    public void The_threshold_is_the_limit_less_the_headroom()
    {
        Assert.Equal(900 * MiB, MemoryPressure.Threshold(1000 * MiB, 10));
        Assert.Equal(1000 * MiB, MemoryPressure.Threshold(1000 * MiB, 0));
    }

    [Fact]
    public void Nothing_is_freed_while_usage_stays_below_the_threshold()
    {
        Assert.Equal(0, MemoryPressure.BytesToFree(Sample(500 * MiB, 400 * MiB), 10));
    }

    [Fact]
    public void Usage_within_the_headroom_frees_what_brings_it_back_below()
    {
        Assert.Equal(50 * MiB, MemoryPressure.BytesToFree(Sample(550 * MiB, 400 * MiB), 10));
    }

    [Fact]
    public void No_more_than_the_cached_bytes_are_ever_asked_for()
    {
        Assert.Equal(100 * MiB, MemoryPressure.BytesToFree(Sample(990 * MiB, 100 * MiB), 10));
    }
}
