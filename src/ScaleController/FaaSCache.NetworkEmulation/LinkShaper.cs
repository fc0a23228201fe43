using System.Globalization;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// The tc qdiscs that give one device the shape of <see cref="ShapedLinkOptions"/>: a token bucket (tbf) for the rate,
/// with netem under it for delay and loss (or netem alone when there is no rate), as in the reference commands.
/// </summary>
internal static class LinkShaper
{
    /// <summary>tbf's queue: how long a packet may wait for tokens before it is dropped.</summary>
    private const string TbfLatency = "50ms";

    /// <summary>netem's queue in packets: enough for a 90 MB/s link with 10 s of delay would be too much; this covers seconds.</summary>
    private const string NetemLimit = "100000";

    /// <summary>Adds the root qdiscs of <paramref name="link"/> to <paramref name="device"/> (nothing when unshaped).</summary>
    public static async Task ApplyAsync(string device, ShapedLinkOptions link, CancellationToken cancellationToken)
    {
        var netem = NetemArguments(link);
        if (link.RateBytesPerSecond is { } rate)
        {
            await CommandRunner.RunAsync("tc", ["qdisc", "add", "dev", device, "root", "handle", "1:", .. TbfArguments(rate)], cancellationToken)
                .ConfigureAwait(false);
            if (netem.Count > 0)
            {
                await CommandRunner.RunAsync("tc", ["qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", .. netem], cancellationToken)
                    .ConfigureAwait(false);
            }
        }
        else if (netem.Count > 0)
        {
            await CommandRunner.RunAsync("tc", ["qdisc", "add", "dev", device, "root", "handle", "1:", .. netem], cancellationToken)
                .ConfigureAwait(false);
        }
    }

    /// <summary>Removes the root qdisc <see cref="ApplyAsync"/> added (its children go with it).</summary>
    public static Task RemoveAsync(string device, CancellationToken cancellationToken) =>
        CommandRunner.RunAsync("tc", ["qdisc", "del", "dev", device, "root"], cancellationToken);

    /// <summary>
    /// tbf with a burst of about 3 ms at the rate (at least 64 KiB so that a GSO super-packet fits): ~270 KB at 90 MB/s,
    /// what the reference measured at 86.8 MB/s with iperf3.
    /// </summary>
    private static string[] TbfArguments(long rateBytesPerSecond)
    {
        var burst = Math.Max(64 * 1024, rateBytesPerSecond * 3 / 1000);
        return
        [
            "tbf",
            "rate", (rateBytesPerSecond * 8).ToString(CultureInfo.InvariantCulture) + "bit",
            "burst", burst.ToString(CultureInfo.InvariantCulture),
            "latency", TbfLatency,
        ];
    }

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
