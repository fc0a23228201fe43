namespace FaaSCache.Peers.Tests;

[Trait("Category", "Unit")]
public sealed class PeerOptionsTests
{
    [Fact]
    public void Client_options_out_of_range_are_all_named_in_one_configuration_error()
    {
        var options = new PeerClientOptions { ChunkSize = 1, CallTimeout = TimeSpan.Zero, InitialStreamWindowSize = 100 };

        FaaSCacheConfigurationException e = Assert.Throws<FaaSCacheConfigurationException>(() => new PeerClientOptionsValidator().ThrowIfInvalid(options));

        Assert.All(e.Failures, f => Assert.StartsWith(nameof(PeerClientOptions) + ".", f, StringComparison.Ordinal));
        Assert.Equal(3, e.Failures.Count);
        Assert.Contains(e.Failures, f => f.Contains("ChunkSize is 1", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.Contains("CallTimeout", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.Contains("InitialStreamWindowSize is 100", StringComparison.Ordinal));
        Assert.True(new PeerClientOptionsValidator().Validate(null, new PeerClientOptions()).Succeeded);
    }

    [Fact]
    public void Server_options_without_a_key_or_with_a_bad_skew_are_named_in_one_configuration_error()
    {
        var options = new PeerServerOptions { MaxClockSkew = TimeSpan.FromSeconds(-1) };

        FaaSCacheConfigurationException e = Assert.Throws<FaaSCacheConfigurationException>(() => new PeerServerOptionsValidator().ThrowIfInvalid(options));

        Assert.All(e.Failures, f => Assert.StartsWith(nameof(PeerServerOptions) + ".", f, StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.Contains("Key is not set", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.Contains("MaxClockSkew", StringComparison.Ordinal));
        Assert.Equal(2, e.Failures.Count);
    }
}
