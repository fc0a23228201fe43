namespace FaaSCache.Core.Tests.Caching;

/// <summary>The cachelet over real storage (Azurite): what only the real store shows; the rest runs in memory.</summary>
[Trait("Category", "Integration")]
public sealed class CacheletOnAzuriteTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_write_creates_a_missing_container_as_output_bindings_do()
    {
        await using var h = await CacheletHarness.CreateOnAzuriteAsync(azurite);
        string container = AzuriteServer.NewContainerName("fresh");
        await h.Cachelet.WriteAsync($"{container}/a.txt", new byte[] { 1 });
        Assert.True((await azurite.CreateServiceClient().GetBlobContainerClient(container).GetBlobClient("a.txt").ExistsAsync()).Value);
    }

    [Fact]
    public async Task A_strong_read_of_a_current_copy_is_a_conditional_304_and_an_external_write_is_seen()
    {
        await using var h = await CacheletHarness.CreateOnAzuriteAsync(azurite, o => o.Consistency = ConsistencyPreset.Strong);
        await h.UploadDirectAsync("v.txt", Encoding.UTF8.GetBytes("one"));
        (await h.Cachelet.ReadAsync(h.Key("v.txt"))).Dispose();

        using (ObjectLease current = await h.Cachelet.ReadAsync(h.Key("v.txt")))
        {
            Assert.Equal(ReadSource.LocalHit, current.Source);
        }

        await h.UploadDirectAsync("v.txt", Encoding.UTF8.GetBytes("two"));
        using ObjectLease changed = await h.Cachelet.ReadAsync(h.Key("v.txt"));
        Assert.Equal(ReadSource.LocalMiss, changed.Source);
        Assert.Equal("two", Encoding.UTF8.GetString(changed.Span));
        Assert.Equal(2, h.Cachelet.Metrics.Snapshot().VersionChecks);
    }
}
