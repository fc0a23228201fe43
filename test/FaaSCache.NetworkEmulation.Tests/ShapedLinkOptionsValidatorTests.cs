namespace FaaSCache.NetworkEmulation.Tests;

[Trait("Category", "Unit")]
public sealed class ShapedLinkOptionsValidatorTests
{
    private readonly ShapedLinkOptionsValidator _validator = new();

    [Fact]
    public void The_defaults_and_the_papers_link_are_valid()
    {
        Assert.True(_validator.Validate(null, ShapedLinkOptions.Unshaped).Succeeded);
        Assert.True(_validator.Validate(null, new ShapedLinkOptions
        {
            RateBytesPerSecond = 90_000_000,
            Delay = TimeSpan.FromMilliseconds(2),
            LossPercent = 0.5,
        }).Succeeded);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-90_000_000L)]
    [InlineData(999L)]
    [InlineData(12_500_000_001L)]
    public void A_rate_outside_the_range_is_refused_naming_the_key_value_and_range(long rate)
    {
        var result = _validator.Validate(null, new ShapedLinkOptions { RateBytesPerSecond = rate });

        var failure = Assert.Single(result.Failures!);
        Assert.Contains("ShapedLinkOptions.RateBytesPerSecond", failure, StringComparison.Ordinal);
        Assert.Contains(rate.ToString(System.Globalization.CultureInfo.InvariantCulture), failure, StringComparison.Ordinal);
        Assert.Contains("allowed 1000 to 12500000000 bytes per second", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_instance_rate_needs_a_storage_rate_and_a_rate_in_range()
    {
        var alone = Assert.Single(_validator.Validate(null, new ShapedLinkOptions { InstanceRateBytesPerSecond = 750_000_000 }).Failures!);
        var tooLow = Assert.Single(_validator.Validate(null, new ShapedLinkOptions { RateBytesPerSecond = 90_000_000, InstanceRateBytesPerSecond = 10 }).Failures!);

        Assert.Contains("InstanceRateBytesPerSecond is 750000000 but RateBytesPerSecond is null", alone, StringComparison.Ordinal);
        Assert.Contains("ShapedLinkOptions.InstanceRateBytesPerSecond is 10: allowed 1000 to", tooLow, StringComparison.Ordinal);
        Assert.True(_validator.Validate(null, new ShapedLinkOptions { RateBytesPerSecond = 90_000_000, InstanceRateBytesPerSecond = 750_000_000 }).Succeeded);
    }

    [Theory]
    [InlineData(-1.0)]
    [InlineData(0.0)]
    [InlineData(10_001.0)]
    public void A_delay_outside_the_range_is_refused(double milliseconds)
    {
        var result = _validator.Validate(null, new ShapedLinkOptions { Delay = TimeSpan.FromMilliseconds(milliseconds) });

        var failure = Assert.Single(result.Failures!);
        Assert.Contains("ShapedLinkOptions.Delay", failure, StringComparison.Ordinal);
        Assert.Contains("allowed 1 microsecond to 10 s", failure, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0.0)]
    [InlineData(-3.0)]
    [InlineData(100.5)]
    [InlineData(double.NaN)]
    [InlineData(double.PositiveInfinity)]
    public void A_loss_outside_the_range_is_refused(double loss)
    {
        var result = _validator.Validate(null, new ShapedLinkOptions { LossPercent = loss });

        var failure = Assert.Single(result.Failures!);
        Assert.Contains("ShapedLinkOptions.LossPercent", failure, StringComparison.Ordinal);
        Assert.Contains("allowed more than 0 and at most 100", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_bad_key_is_reported_at_once()
    {
        var error = Assert.Throws<FaaSCacheConfigurationException>(() => _validator.ThrowIfInvalid(
            new ShapedLinkOptions { RateBytesPerSecond = 0, Delay = TimeSpan.FromSeconds(-1), LossPercent = 200 }));

        Assert.Equal(3, error.Failures.Count);
    }

    [Fact]
    public async Task Create_refuses_bad_options_before_touching_the_machine()
    {
        var error = await Assert.ThrowsAsync<FaaSCacheConfigurationException>(() =>
            NetworkNamespace.CreateAsync("neunit", 1, new ShapedLinkOptions { RateBytesPerSecond = 5 }, CancellationToken.None));

        Assert.Contains("RateBytesPerSecond is 5", error.Message, StringComparison.Ordinal);
    }
}
