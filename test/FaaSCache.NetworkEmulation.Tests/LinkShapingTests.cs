namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>
/// Shaping is in effect: a transfer never exceeds 1.3x the link's rate (load on a shared machine can only slow it, so this
/// holds under any load), and the qdiscs carry the configured rate (which catches a bits-for-bytes slip). The unshaped
/// rates are printed beside, for information, not compared: under load they can fall below the shaped ones.
/// </summary>
[Trait("Category", "Integration")]
[Collection(NetworkNamespaceCollection.Name)]
public sealed class LinkShapingTests(ITestOutputHelper output)
{
    private const long PaperRate = 90_000_000; // §6: 90 MB/s to remote storage, 720 mbit
    private const long Bulk = 64L << 20;

    [NetworkEmulationFact]
    public async Task A_link_shaped_to_ninety_megabytes_per_second_holds_bulk_transfers_to_it_in_both_directions()
    {
        await using var test = new TestNetwork();
        await using var shaped = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });
        await using var unshaped = await test.CreateAsync(ShapedLinkOptions.Unshaped);

        var shapedDown = await Transfers.DownloadAsync(shaped, Bulk);
        var shapedUp = await Transfers.UploadAsync(shaped, Bulk);
        var unshapedDown = await Transfers.DownloadAsync(unshaped, Bulk);
        var unshapedUp = await Transfers.UploadAsync(unshaped, Bulk);
        output.WriteLine($"64 MiB at 90 MB/s: down {shapedDown / 1e6:F1} MB/s, up {shapedUp / 1e6:F1} MB/s; unshaped: down {unshapedDown / 1e6:F1} MB/s, up {unshapedUp / 1e6:F1} MB/s");

        // Load on a shared machine can only slow a transfer, never speed it past the shaper: the upper bound holds under
        // any load; the configured rate (720 Mbit = 90 MB/s, not bits for bytes) is checked on the qdiscs themselves.
        AssertHeldTo(PaperRate, shapedDown, "root -> instance");
        AssertHeldTo(PaperRate, shapedUp, "instance -> root");
        AssertShapedAt(shaped.RootInterface, "720Mbit");
        AssertShapedAt(shaped.IngressInterface, "720Mbit");
    }

    [NetworkEmulationFact]
    public async Task Traffic_between_two_instances_crosses_both_links_and_so_the_slower_one_holds_it()
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

    }

    [NetworkEmulationFact]
    public async Task An_instance_rate_gives_traffic_between_instances_its_own_bucket_while_storage_traffic_keeps_its_rate()
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
        // Instance traffic has a bucket of its own at 360 MB/s (2880 Mbit), storage traffic one at 90 MB/s (720 Mbit):
        // checked on the classes, since load on a shared machine can slow either transfer by any amount.
        string classes = TestNetwork.Run("tc", "class", "show", "dev", first.RootInterface);
        Assert.Contains("rate 2880Mbit", classes, StringComparison.Ordinal);
        Assert.Contains("rate 720Mbit", classes, StringComparison.Ordinal);
        Assert.Contains("htb", TestNetwork.Run("tc", "qdisc", "show", "dev", first.IngressInterface), StringComparison.Ordinal);
    }

    [NetworkEmulationFact]
    public async Task Reshape_changes_the_rate_in_both_directions()
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
        Assert.DoesNotContain("rate", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
        Assert.DoesNotContain("tbf", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
        Assert.Equal(ShapedLinkOptions.Unshaped.ToString(), network.Link.ToString());

        // And from unshaped back to a shape (there is no qdisc of ours to remove first).
        await network.ReshapeAsync(new ShapedLinkOptions { RateBytesPerSecond = Slower });
        Assert.Contains("rate 160Mbit", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
        Assert.Contains("rate 160Mbit", TestNetwork.Run("tc", "qdisc", "show", "dev", network.IngressInterface), StringComparison.Ordinal);
    }

    [NetemFact]
    public async Task Delay_is_added_in_each_direction_and_loss_is_configured_on_both()
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
    public async Task Delay_or_loss_on_a_kernel_without_netem_is_refused_before_anything_is_made()
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
    public async Task A_link_taken_down_cuts_the_instance_off_and_brought_up_restores_it_with_its_shape()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = PaperRate });

        using var listener = new System.Net.Sockets.TcpListener(network.HostAddress, 0);
        listener.Start();
        var port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        await network.SetLinkDownAsync(true);
        Assert.True(network.IsLinkDown);
        await using (var attempt = WrappedProcess.Start(network, "timeout", "3", "bash", "-c", $"exec 3<>/dev/tcp/{network.HostAddress}/{port}"))
        {
            Assert.NotEqual(0, await attempt.WaitAsync(Transfers.Timeout));
        }

        Assert.False(listener.Pending(), "a connection from the namespace arrived while its link was down");
        listener.Stop();
        await network.SetLinkDownAsync(false);
        var rate = await Transfers.DownloadAsync(network, Bulk / 4);
        output.WriteLine($"after the partition healed: {rate / 1e6:F1} MB/s");
        AssertHeldTo(PaperRate, rate, "after the link came back up");
    }

    /// <summary>
    /// The shaper holds a transfer to its rate: above 1.3 x the rate it is not in effect. No lower bound: CPU starvation on
    /// a shared machine slows transfers by any amount, and the configured rate is checked on the qdisc instead.
    /// </summary>
    private static void AssertHeldTo(long rate, double measured, string what)
        => Assert.True(measured <= rate * 1.3, $"{what}: {measured / 1e6:F1} MB/s is above 1.3 x the configured {rate / 1e6:F1} MB/s: the shaping is not in effect");

    private static void AssertShapedAt(string device, string rate)
        => Assert.Contains($"rate {rate}", TestNetwork.Run("tc", "qdisc", "show", "dev", device), StringComparison.Ordinal);
}
