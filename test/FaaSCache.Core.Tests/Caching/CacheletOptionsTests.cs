using FaaSCache.Caching;
using FaaSCache.Options;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using FaaSCache.TestSupport;
using Microsoft.Extensions.Options;
using Xunit;

namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class CacheletOptionsTests
{
    [Fact]
    public void A_cachelet_refuses_invalid_options_naming_the_key()
    {
        using var shm = new TempShmDirectory();
        var options = new FaaSCacheOptions { CapacityBytes = 10 };
        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new Cachelet(
            options,
            AzureBlobStore.FromConnectionString("UseDevelopmentStorage=true"),
            new SharedMemoryStore("opts", [shm.Path])));
        Assert.Contains("capacityBytes", e.Message, StringComparison.Ordinal);
    }
}
