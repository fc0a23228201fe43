using FaaSCache.NetworkEmulation;
using Xunit.Abstractions;

namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>
/// Shaping is in effect, measured against an unshaped link in the same run: not a check of how fast our code is, but
/// that tc holds a link to its rate (at most 1.3x; at least a quarter, which catches a bits-for-bytes slip).
/// </summary>
[Collection(NetworkNamespaceCollection.Name)]
public sealed class LinkShapingTests(ITestOutputHelper output)
{
    private const long PaperRate = 90_000_000; // §6: 90 MB/s to remote storage, 720 mbit
    private const long Bulk = 64L << 20;

    [NetworkEmulationFact]
    public async Task ALinkShapedToNinetyMegabytesPerSecondHoldsBulkTransfersToItInBothDirections()
    {
        await using var test = new TestNetwork();
        await using var shaped = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });
        await using var unshaped = await test.CreateAsync(ShapedLinkOptions.Unshaped);

        var shapedDown = await Transfers.DownloadAsync(shaped, Bulk);
        var shapedUp = await Transfers.UploadAsync(shaped, Bulk);
        var unshapedDown = await Transfers.DownloadAsync(unshaped, Bulk);
        var unshapedUp = await Transfers.UploadAsync(unshaped, Bulk);
        output.WriteLine($"64 MiB at 90 MB/s: down {shapedDown / 1e6:F1} MB/s, up {shapedUp / 1e6:F1} MB/s; unshaped: down {unshapedDown / 1e6:F1} MB/s, up {unshapedUp / 1e6:F1} MB/s");

        AssertHeldTo(PaperRate, shapedDown, "root -> instance");
        AssertHeldTo(PaperRate, shapedUp, "instance -> root");
        Assert.True(shapedDown < unshapedDown, $"shaped download {shapedDown / 1e6:F1} MB/s is not below unshaped {unshapedDown / 1e6:F1} MB/s");
        Assert.True(shapedUp < unshapedUp, $"shaped upload {shapedUp / 1e6:F1} MB/s is not below unshaped {unshapedUp / 1e6:F1} MB/s");
    }

    [NetworkEmulationFact]
    public async Task TrafficBetweenTwoInstancesCrossesBothLinksAndSoTheSlowerOneHoldsIt()
    {
        await using var test = new TestNetwork();
        await using var first = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });
        await using var second = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });

        var both = await Transfers.InstanceToInstanceAsync(first, second, Bulk);
        await second.ReshapeAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate / 3 });
        var intoSlower = await Transfers.InstanceToInstanceAsync(first, second, Bulk / 2);
        var outOfSlower = await Transfers.InstanceToInstanceAsync(second, first, Bulk / 2);
        await first.ReshapeAsync(ShapedLinkOptions.Unshaped);
        await second.ReshapeAsync(ShapedLinkOptions.Unshaped);
        var unshaped = await Transfers.InstanceToInstanceAsync(first, second, Bulk);
        output.WriteLine($"instance -> instance (BW_Inst): both 90 MB/s: {both / 1e6:F1} MB/s; into a 30 MB/s link: {intoSlower / 1e6:F1} MB/s; out of it: {outOfSlower / 1e6:F1} MB/s; unshaped: {unshaped / 1e6:F1} MB/s");

        AssertHeldTo(PaperRate, both, "instance -> instance over two 90 MB/s links");
        AssertHeldTo(PaperRate / 3, intoSlower, "instance -> instance into a 30 MB/s link");
        AssertHeldTo(PaperRate / 3, outOfSlower, "instance -> instance out of a 30 MB/s link");
        Assert.True(both < unshaped, $"shaped {both / 1e6:F1} MB/s is not below unshaped {unshaped / 1e6:F1} MB/s");
    }

    [NetworkEmulationFact]
    public async Task AnInstanceRateGivesTrafficBetweenInstancesItsOwnBucketWhileStorageTrafficKeepsItsRate()
    {
        const long InstanceRate = 4 * PaperRate;
        var link = new ShapedLinkOptions { RateBytesPerSecond = PaperRate, InstanceRateBytesPerSecond = InstanceRate };
        await using var test = new TestNetwork();
        await using var first = await test.CreateAsync(link);
        await using var second = await test.CreateAsync(link);

        var storageDown = await Transfers.DownloadAsync(first, Bulk);
        var storageUp = await Transfers.UploadAsync(first, Bulk);
        var betweenInstances = await Transfers.InstanceToInstanceAsync(first, second, 2 * Bulk);
        output.WriteLine($"storage 90 MB/s, instances 360 MB/s: storage down {storageDown / 1e6:F1} MB/s, up {storageUp / 1e6:F1} MB/s; instance -> instance {betweenInstances / 1e6:F1} MB/s");

        AssertHeldTo(PaperRate, storageDown, "root -> instance (storage class)");
        AssertHeldTo(PaperRate, storageUp, "instance -> root (storage class)");
        AssertHeldTo(InstanceRate, betweenInstances, "instance -> instance (instance class)");
        Assert.True(betweenInstances > storageDown, $"instance traffic {betweenInstances / 1e6:F1} MB/s is held to the storage rate ({storageDown / 1e6:F1} MB/s)");
        Assert.Contains("htb", TestNetwork.Run("tc", "qdisc", "show", "dev", first.IngressInterface), StringComparison.Ordinal);
    }

    [NetworkEmulationFact]
    public async Task ReshapeChangesTheRateInBothDirections()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });
        var before = await Transfers.DownloadAsync(network, Bulk);

        const long Slower = 20_000_000;
        await network.ReshapeAsync(new ShapedLinkOptions { RateBytesPerSecond = Slower });
        var down = await Transfers.DownloadAsync(network, Bulk / 4);
        var up = await Transfers.UploadAsync(network, Bulk / 4);

        await network.ReshapeAsync(ShapedLinkOptions.Unshaped);
        var unshaped = await Transfers.DownloadAsync(network, Bulk);
        output.WriteLine($"90 MB/s: {before / 1e6:F1} MB/s; reshaped to 20 MB/s: down {down / 1e6:F1}, up {up / 1e6:F1} MB/s; unshaped: {unshaped / 1e6:F1} MB/s");

        AssertHeldTo(PaperRate, before, "before the reshape");
        AssertHeldTo(Slower, down, "root -> instance after the reshape");
        AssertHeldTo(Slower, up, "instance -> root after the reshape");
        Assert.True(unshaped > before, $"unshaped {unshaped / 1e6:F1} MB/s is not above the 90 MB/s link's {before / 1e6:F1} MB/s");
        Assert.DoesNotContain("tbf", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
        Assert.Equal(ShapedLinkOptions.Unshaped.ToString(), network.Link.ToString());
    }

    [NetemFact]
    public async Task DelayIsAddedInEachDirectionAndLossIsConfiguredOnBoth()
    {
        await using var test = new TestNetwork();
        var delay = TimeSpan.FromMilliseconds(40);
        await using var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate, Delay = delay, LossPercent = 0.5 });
        await using var plain = await test.CreateAsync(ShapedLinkOptions.Unshaped);

        var delayed = await Transfers.RoundTripAsync(network);
        var direct = await Transfers.RoundTripAsync(plain);
        output.WriteLine($"round trip with 40 ms each way: {delayed.TotalMilliseconds:F1} ms; unshaped: {direct.TotalMilliseconds:F1} ms");

        // netem holds every packet at least the delay: a round trip crosses it twice.
        Assert.True(delayed >= 2 * delay, $"round trip {delayed.TotalMilliseconds:F1} ms is shorter than twice the 40 ms delay");
        foreach (var device in (string[])[network.RootInterface, network.IngressInterface])
        {
            var qdiscs = TestNetwork.Run("tc", "qdisc", "show", "dev", device);
            Assert.Contains("tbf", qdiscs, StringComparison.Ordinal);
            Assert.Contains("delay 40ms", qdiscs, StringComparison.Ordinal);
            Assert.Contains("loss 0.5%", qdiscs, StringComparison.Ordinal);
        }
    }

    [WithoutNetemFact]
    public async Task DelayOrLossOnAKernelWithoutNetemIsRefusedBeforeAnythingIsMade()
    {
        await using var test = new TestNetwork();
        var index = test.TakeIndex();

        var error = await Assert.ThrowsAsync<NotSupportedException>(() => NetworkNamespace.CreateAsync(
            test.Prefix, index, new ShapedLinkOptions { RateBytesPerSecond = PaperRate, Delay = TimeSpan.FromMilliseconds(2) }, CancellationToken.None));
        Assert.Contains("CONFIG_NET_SCH_NETEM", error.Message, StringComparison.Ordinal);
        Assert.Empty(TestNetwork.Leftovers(test.Prefix));

        await using var network = await NetworkNamespace.CreateAsync(test.Prefix, index, new ShapedLinkOptions { RateBytesPerSecond = PaperRate }, CancellationToken.None);
        await Assert.ThrowsAsync<NotSupportedException>(() => network.ReshapeAsync(new ShapedLinkOptions { LossPercent = 1 }));
        Assert.Equal(PaperRate, network.Link.RateBytesPerSecond);
        Assert.Contains("tbf", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
    }

    [NetworkEmulationFact]
    public async Task ALinkTakenDownCutsTheInstanceOffAndBroughtUpRestoresItWithItsShape()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });

        await network.SetLinkDownAsync(true);
        Assert.True(network.IsLinkDown);
        await using (var attempt = WrappedProcess.Start(network, "timeout", "3", "bash", "-c", $"exec 3<>/dev/tcp/{network.HostAddress}/9"))
        {
            Assert.NotEqual(0, await attempt.WaitAsync(Transfers.Timeout));
        }

        await network.SetLinkDownAsync(false);
        var rate = await Transfers.DownloadAsync(network, Bulk / 4);
        output.WriteLine($"after the partition healed: {rate / 1e6:F1} MB/s");
        AssertHeldTo(PaperRate, rate, "after the link came back up");
    }

    private static void AssertHeldTo(long rate, double measured, string what)
    {
        Assert.True(measured <= rate * 1.3, $"{what}: {measured / 1e6:F1} MB/s is above 1.3 x the configured {rate / 1e6:F1} MB/s: the shaping is not in effect");
        Assert.True(measured >= rate / 4.0, $"{what}: {measured / 1e6:F1} MB/s is below a quarter of the configured {rate / 1e6:F1} MB/s: the link is shaped too hard (bits for bytes?)");
    }
}
