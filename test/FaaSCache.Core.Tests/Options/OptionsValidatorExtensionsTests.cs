namespace FaaSCache.Core.Tests.Options;

[Trait("Category", "Unit")]
public sealed class OptionsValidatorExtensionsTests
{
    [Fact]
    public void Valid_options_come_back_as_they_were()
    {
        var options = new StorageResilienceOptions();

        Assert.Same(options, new StorageResilienceOptionsValidator().ThrowIfInvalid(options));
    }

    [Fact]
    public void Every_failure_is_listed_in_one_configuration_exception()
    {
        var options = new StorageResilienceOptions { MaxRetries = -1, BreakerFailureRatio = 2, AttemptTimeout = TimeSpan.Zero };

        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new StorageResilienceOptionsValidator().ThrowIfInvalid(options));

        Assert.Equal(3, e.Failures.Count);
        Assert.Equal(string.Join("; ", e.Failures), e.Message);
        Assert.Contains(e.Failures, f => f.StartsWith("StorageResilienceOptions.MaxRetries is -1", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.StartsWith("StorageResilienceOptions.BreakerFailureRatio is 2", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.StartsWith("StorageResilienceOptions.AttemptTimeout is 00:00:00", StringComparison.Ordinal));
    }

    [Fact]
    public void A_store_refuses_resilience_options_polly_would_refuse_naming_the_setting()
    {
        var e = Assert.Throws<FaaSCacheConfigurationException>(() =>
            new AzureBlobStore(new BlobServiceClient("UseDevelopmentStorage=true"), new StorageResilienceOptions { BreakerMinimumThroughput = 1 }));

        Assert.Contains("BreakerMinimumThroughput is 1; it must be at least 2", Assert.Single(e.Failures), StringComparison.Ordinal);
    }

    [Fact]
    public void A_single_setting_error_is_its_own_one_failure()
    {
        var e = new FaaSCacheConfigurationException("extensions:faasCache:capacityBytes", "-1", "allowed values are whole numbers from 0");

        Assert.Equal(e.Message, Assert.Single(e.Failures));
    }
}
