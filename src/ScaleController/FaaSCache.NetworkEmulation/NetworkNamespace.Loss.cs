namespace FaaSCache.NetworkEmulation;

/// <summary>
/// Packet loss without netem: an nftables table inside the namespace drops a random share of what the instance sends and
/// receives (<c>numgen random mod 100 &lt; N drop</c>); it goes with the namespace, and tbf rate shaping still applies.
/// </summary>
public sealed partial class NetworkNamespace
{
    private const string LossTable = "faascache_loss";

    /// <summary>Gets the share of packets dropped each way, in percent (0: none).</summary>
    public int LossPercent { get; private set; }

    /// <summary>Drops <paramref name="percent"/> % of the instance's packets each way (0 removes the rule).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="percent"/> is not 0 to 100.</exception>
    public async Task SetPacketLossAsync(int percent)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(percent);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(percent, 100);
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            await CommandRunner.TryRunAsync("ip", ["netns", "exec", Name, "nft", "delete", "table", "inet", LossTable], CancellationToken.None).ConfigureAwait(false);
            LossPercent = 0;
            if (percent > 0)
            {
                string drop = string.Create(CultureInfo.InvariantCulture, $"numgen random mod 100 < {percent} drop;");
                string table = $"table inet {LossTable} {{ chain in {{ type filter hook input priority 0; policy accept; {drop} }}; " +
                    $"chain out {{ type filter hook output priority 0; policy accept; {drop} }}; }}";
                await CommandRunner.RunAsync("ip", ["netns", "exec", Name, "nft", table], CancellationToken.None).ConfigureAwait(false);
                LossPercent = percent;
            }
        }
        finally
        {
            _gate.Release();
        }
    }
}
