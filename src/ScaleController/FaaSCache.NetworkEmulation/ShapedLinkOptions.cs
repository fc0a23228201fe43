namespace FaaSCache.NetworkEmulation;

/// <summary>
/// How one instance's link to the root namespace is shaped, in each direction alike (§6: "I/O bandwidth to remote
/// storage ... is 90MB/s for large objects"). A null property leaves that aspect unshaped; all null is an unshaped link.
/// Checked by <see cref="ShapedLinkOptionsValidator"/>.
/// </summary>
public sealed class ShapedLinkOptions
{
    /// <summary>The rate limit in bytes per second (tc tbf), e.g. 90_000_000 for the paper's 90 MB/s; null: no limit.</summary>
    public long? RateBytesPerSecond { get; set; }

    /// <summary>
    /// When set, traffic between this instance and other instances (their 10.250.x.2 addresses) gets its own token bucket
    /// at this rate, and <see cref="RateBytesPerSecond"/> (then required) holds only the traffic to the root namespace
    /// (storage): the paper's VMs reach each other faster (750 MB/s, its BW_Inst) than storage (90 MB/s, BW_BS).
    /// Null: one bucket for all of the link's traffic, so instance-to-instance traffic is held to the same rate.
    /// </summary>
    public long? InstanceRateBytesPerSecond { get; set; }

    /// <summary>The one-way delay added in each direction (tc netem), so a round trip gains twice this; null: none.</summary>
    public TimeSpan? Delay { get; set; }

    /// <summary>The share of packets dropped in each direction, in percent (tc netem loss); null: none.</summary>
    public double? LossPercent { get; set; }

    /// <summary>An unshaped link (the veth pair at full speed).</summary>
    public static ShapedLinkOptions Unshaped => new();

    /// <summary>True when any aspect is shaped, i.e. the link gets a qdisc.</summary>
    public bool IsShaped => RateBytesPerSecond is not null || InstanceRateBytesPerSecond is not null || Delay is not null || LossPercent is not null;

    /// <summary>A copy, so that a namespace keeps the shape it applied even if the caller changes its instance.</summary>
    public ShapedLinkOptions Clone() => new()
    {
        RateBytesPerSecond = RateBytesPerSecond,
        InstanceRateBytesPerSecond = InstanceRateBytesPerSecond,
        Delay = Delay,
        LossPercent = LossPercent,
    };

    /// <inheritdoc />
    public override string ToString()
    {
        if (!IsShaped)
        {
            return "unshaped";
        }

        var parts = new List<string>(3);
        if (RateBytesPerSecond is { } rate)
        {
            parts.Add(FormattableString.Invariant($"rate {rate / 1e6:0.###} MB/s"));
        }

        if (InstanceRateBytesPerSecond is { } instanceRate)
        {
            parts.Add(FormattableString.Invariant($"to other instances {instanceRate / 1e6:0.###} MB/s"));
        }

        if (Delay is { } delay)
        {
            parts.Add(FormattableString.Invariant($"delay {delay.TotalMilliseconds:0.###} ms each way"));
        }

        if (LossPercent is { } loss)
        {
            parts.Add(FormattableString.Invariant($"loss {loss:0.####}%"));
        }

        return string.Join(", ", parts);
    }
}
