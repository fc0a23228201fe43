namespace FaaSCache.Peers.Tests;

/// <summary>Keeps the throughput measurement (<c>dotnet FaaSCache.Peers.Tests.dll measure</c>) working; the numbers are in the README.</summary>
[Trait("Category", "Integration")]
public sealed class PeerThroughputTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task The_throughput_measurement_reports_remote_hits_next_to_raw_tcp()
    {
        var log = new StringWriter();
        IReadOnlyList<PeerThroughput.Sample> samples = await PeerThroughput.MeasureAsync(
            azurite.ConnectionString, await azurite.CreateContainerAsync("throughput"), [16L << 20], [PeerWire.DefaultChunkSize], iterations: 2, TimeSpan.Zero, log);
        output.WriteLine(log.ToString());

        Assert.Equal(["rh_cachelet", "rh_client", "rh_client_pooled", "tcp_raw", "tcp_raw_shm"], samples.Select(s => s.Path).Order(StringComparer.Ordinal));
        Assert.All(samples, s => Assert.True(s.MedianMBps > 0, s.ToString()));
    }
}
