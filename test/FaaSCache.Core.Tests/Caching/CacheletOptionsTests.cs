using Microsoft.Extensions.Options;

namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class CacheletOptionsTests
{
    [Fact]
    public void A_cachelet_refuses_invalid_options_naming_the_key()
    {
        using var shm = new TempShmDirectory();
        var options = new FaaSCacheOptions { CapacityBytes = 10 };
        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new CacheletBuilder("opts", [shm.Path])
            .WithOptions(options)
            .WithStorage(AzureBlobStore.FromConnectionString("UseDevelopmentStorage=true"))
            .Build());
        Assert.Contains("capacityBytes", e.Message, StringComparison.Ordinal);
    }
}
