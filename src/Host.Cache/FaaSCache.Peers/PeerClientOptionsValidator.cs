namespace FaaSCache.Peers;

/// <summary>Checks <see cref="PeerClientOptions"/>: each failure names the setting, the value and what is allowed.</summary>
public sealed class PeerClientOptionsValidator : OptionsValidator<PeerClientOptions>
{
    /// <summary>The smallest <see cref="PeerClientOptions.InitialStreamWindowSize"/>: HTTP/2's initial window, 64 KiB - 1.</summary>
    public const int MinStreamWindowSize = 65535;

    /// <inheritdoc />
    protected override void Check(PeerClientOptions options, List<string> failures)
    {
        if (options.ChunkSize is < PeerWire.MinChunkSize or > PeerWire.MaxChunkSize)
        {
            failures.Add($"PeerClientOptions.ChunkSize is {options.ChunkSize}; it must be between {PeerWire.MinChunkSize} and {PeerWire.MaxChunkSize}.");
        }

        foreach ((string setting, TimeSpan value) in new[]
        {
            (nameof(options.CallTimeout), options.CallTimeout), (nameof(options.FetchTimeout), options.FetchTimeout),
            (nameof(options.IdleTimeout), options.IdleTimeout), (nameof(options.ConnectTimeout), options.ConnectTimeout),
        })
        {
            if (value <= TimeSpan.Zero)
            {
                failures.Add($"PeerClientOptions.{setting} is {value}; it must be positive.");
            }
        }

        if (options.InitialStreamWindowSize < MinStreamWindowSize)
        {
            failures.Add($"PeerClientOptions.InitialStreamWindowSize is {options.InitialStreamWindowSize}; it must be at least {MinStreamWindowSize}.");
        }
    }
}
