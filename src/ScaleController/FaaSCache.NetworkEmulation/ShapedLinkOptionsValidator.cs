using FaaSCache.Options;
using Microsoft.Extensions.Options;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// Checks <see cref="ShapedLinkOptions"/>: each failure names the key, the value and what is allowed
/// (<c>new ShapedLinkOptionsValidator().ThrowIfInvalid(link)</c> throws them all as one <c>FaaSCacheConfigurationException</c>).
/// </summary>
public sealed class ShapedLinkOptionsValidator : OptionsValidator<ShapedLinkOptions>
{
    /// <summary>The lowest rate accepted, in bytes per second (below it tc's token bucket is meaningless for TCP).</summary>
    public const long MinRateBytesPerSecond = 1_000;

    /// <summary>The highest rate accepted, in bytes per second (100 Gbit/s; far above what a veth pair carries).</summary>
    public const long MaxRateBytesPerSecond = 12_500_000_000;

    /// <summary>The smallest delay accepted (netem's resolution is a microsecond).</summary>
    public static readonly TimeSpan MinDelay = TimeSpan.FromMicroseconds(1);

    /// <summary>The largest delay accepted.</summary>
    public static readonly TimeSpan MaxDelay = TimeSpan.FromSeconds(10);

    /// <inheritdoc />
    protected override void Check(ShapedLinkOptions options, List<string> failures)
    {
        if (options.RateBytesPerSecond is { } rate && rate is < MinRateBytesPerSecond or > MaxRateBytesPerSecond)
        {
            failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"ShapedLinkOptions.RateBytesPerSecond is {rate}: allowed {MinRateBytesPerSecond} to {MaxRateBytesPerSecond} bytes per second (e.g. 90000000 for 90 MB/s), or null for no rate limit."));
        }

        if (options.InstanceRateBytesPerSecond is { } instanceRate)
        {
            if (instanceRate is < MinRateBytesPerSecond or > MaxRateBytesPerSecond)
            {
                failures.Add(string.Create(CultureInfo.InvariantCulture,
                    $"ShapedLinkOptions.InstanceRateBytesPerSecond is {instanceRate}: allowed {MinRateBytesPerSecond} to {MaxRateBytesPerSecond} bytes per second (e.g. 750000000 for the paper's 750 MB/s between VMs), or null to hold instance traffic to RateBytesPerSecond."));
            }
            else if (options.RateBytesPerSecond is null)
            {
                failures.Add(string.Create(CultureInfo.InvariantCulture,
                    $"ShapedLinkOptions.InstanceRateBytesPerSecond is {instanceRate} but RateBytesPerSecond is null: a separate rate for instance traffic needs a rate for storage traffic too (set RateBytesPerSecond, e.g. 90000000)."));
            }
        }

        if (options.Delay is { } delay && (delay < MinDelay || delay > MaxDelay))
        {
            failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"ShapedLinkOptions.Delay is {delay}: allowed 1 microsecond to {MaxDelay.TotalSeconds} s (one way, added in each direction), or null for no delay."));
        }

        if (options.LossPercent is { } loss && !(loss > 0 && loss <= 100))
        {
            failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"ShapedLinkOptions.LossPercent is {loss}: allowed more than 0 and at most 100 (percent of packets dropped in each direction), or null for no loss."));
        }
    }
}
