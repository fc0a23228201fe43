namespace FaaSCache.NetworkEmulation;

/// <summary>
/// The tc qdiscs that give one device the shape of <see cref="ShapedLinkOptions"/>: a token bucket (tbf) for the rate,
/// with netem under it for delay and loss (or netem alone when there is no rate), as in the reference commands. With a
/// separate instance rate, htb holds two buckets and a u32 filter sends traffic of other instances (10.250.x.2) to the
/// second one.
/// </summary>
internal static class LinkShaper
{
    /// <summary>tbf's queue: how long a packet may wait for tokens before it is dropped.</summary>
    private const string TbfLatency = "50ms";

    /// <summary>netem's queue in packets (its default of 1000 drops packets at 90 MB/s with a few ms of delay).</summary>
    private const string NetemLimit = "100000";

    /// <summary>htb's per-round quantum: its default (rate / 10) is far too large at these rates and warns.</summary>
    private const string HtbQuantum = "200000";

    /// <summary>The storage class (and htb's default) and the instance class.</summary>
    private const string StorageClass = "1:10";
    private const string InstanceClass = "1:20";

    /// <summary>Which way a device's egress carries the link's traffic: it decides where the peer's address sits in the IP header.</summary>
    public enum Direction
    {
        /// <summary>The root-side veth end: packets go to the instance, the other party is their source (IP offset 12).</summary>
        TowardsInstance,

        /// <summary>The ifb device carrying the root end's ingress: packets come from the instance, the other party is their destination (offset 16).</summary>
        FromInstance,
    }

    /// <summary>Adds the root qdiscs of <paramref name="link"/> to <paramref name="device"/> (nothing when unshaped).</summary>
    public static async Task ApplyAsync(string device, ShapedLinkOptions link, Direction direction, CancellationToken cancellationToken)
    {
        var netem = NetemArguments(link);
        if (link is { RateBytesPerSecond: { } storageRate, InstanceRateBytesPerSecond: { } instanceRate })
        {
            await TcAsync(cancellationToken, "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "10").ConfigureAwait(false);
            await TcAsync(cancellationToken, ["class", "add", "dev", device, "parent", "1:", "classid", StorageClass, .. HtbClassArguments(storageRate)]).ConfigureAwait(false);
            await TcAsync(cancellationToken, ["class", "add", "dev", device, "parent", "1:", "classid", InstanceClass, .. HtbClassArguments(instanceRate)]).ConfigureAwait(false);

            // 10.250.x.2 (value 0x0afa0002 under mask 0xffff0003): an instance's end of its /30, never a root-side .1.
            var offset = direction == Direction.TowardsInstance ? "12" : "16";
            await TcAsync(cancellationToken, "filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", "1",
                "u32", "match", "u32", "0x0afa0002", "0xffff0003", "at", offset, "flowid", InstanceClass).ConfigureAwait(false);
            if (netem.Count > 0)
            {
                await TcAsync(cancellationToken, ["qdisc", "add", "dev", device, "parent", StorageClass, "handle", "10:", .. netem]).ConfigureAwait(false);
                await TcAsync(cancellationToken, ["qdisc", "add", "dev", device, "parent", InstanceClass, "handle", "20:", .. netem]).ConfigureAwait(false);
            }
        }
        else if (link.RateBytesPerSecond is { } rate)
        {
            await TcAsync(cancellationToken, ["qdisc", "add", "dev", device, "root", "handle", "1:", .. TbfArguments(rate)]).ConfigureAwait(false);
            if (netem.Count > 0)
            {
                await TcAsync(cancellationToken, ["qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", .. netem]).ConfigureAwait(false);
            }
        }
        else if (netem.Count > 0)
        {
            await TcAsync(cancellationToken, ["qdisc", "add", "dev", device, "root", "handle", "1:", .. netem]).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Removes the root qdisc <see cref="ApplyAsync"/> added (its classes, filters and children go with it); a device with
    /// none (unshaped, or an apply that failed half way) is left as it is.
    /// </summary>
    public static async Task RemoveAsync(string device, CancellationToken cancellationToken)
    {
        var result = await CommandRunner.TryRunAsync("tc", ["qdisc", "del", "dev", device, "root"], cancellationToken).ConfigureAwait(false);
        if (!result.Succeeded && !result.StandardError.Contains("handle of zero", StringComparison.Ordinal))
        {
            throw result.ToException();
        }
    }

    private static Task<string> TcAsync(CancellationToken cancellationToken, params string[] arguments) =>
        CommandRunner.RunAsync("tc", arguments, cancellationToken);

    /// <summary>
    /// A burst of about 3 ms at the rate (at least 64 KiB so that a GSO super-packet fits): ~270 KB at 90 MB/s, what the
    /// reference measured at 86.8 MB/s with iperf3.
    /// </summary>
    private static string Burst(long rateBytesPerSecond) =>
        Math.Max(64 * 1024, rateBytesPerSecond * 3 / 1000).ToString(CultureInfo.InvariantCulture);

    private static string Bits(long rateBytesPerSecond) =>
        (rateBytesPerSecond * 8).ToString(CultureInfo.InvariantCulture) + "bit";

    private static string[] TbfArguments(long rateBytesPerSecond) =>
        ["tbf", "rate", Bits(rateBytesPerSecond), "burst", Burst(rateBytesPerSecond), "latency", TbfLatency];

    /// <summary>A class that neither lends nor borrows (rate = ceil): each kind of traffic has its own fixed link.</summary>
    private static string[] HtbClassArguments(long rateBytesPerSecond) =>
    [
        "htb", "rate", Bits(rateBytesPerSecond), "ceil", Bits(rateBytesPerSecond),
        "burst", Burst(rateBytesPerSecond), "cburst", Burst(rateBytesPerSecond), "quantum", HtbQuantum,
    ];

    private static List<string> NetemArguments(ShapedLinkOptions link)
    {
        if (link.Delay is null && link.LossPercent is null)
        {
            return [];
        }

        var arguments = new List<string> { "netem", "limit", NetemLimit };
        if (link.Delay is { } delay)
        {
            arguments.AddRange(["delay", ((long)Math.Round(delay.TotalMicroseconds)).ToString(CultureInfo.InvariantCulture) + "us"]);
        }

        if (link.LossPercent is { } loss)
        {
            arguments.AddRange(["loss", loss.ToString("0.######", CultureInfo.InvariantCulture) + "%"]);
        }

        return arguments;
    }
}
