namespace FaaSCache.Cluster;

/// <summary>Checks <see cref="PeerServerOptions"/>: each failure names the setting, the value and what is allowed.</summary>
public sealed class PeerServerOptionsValidator : OptionsValidator<PeerServerOptions>
{
    /// <inheritdoc />
    protected override void Check(PeerServerOptions options, List<string> failures)
    {
        if (options.Key is null)
        {
            failures.Add("PeerServerOptions.Key is not set: derive it with PeerKey.FromConnectionString(storageConnectionString, appName).");
        }

        if (options.ChunkSize is < PeerWire.MinChunkSize or > PeerWire.MaxChunkSize)
        {
            failures.Add($"PeerServerOptions.ChunkSize is {options.ChunkSize}; it must be between {PeerWire.MinChunkSize} and {PeerWire.MaxChunkSize}.");
        }

        if (options.MaxClockSkew <= TimeSpan.Zero)
        {
            failures.Add($"PeerServerOptions.MaxClockSkew is {options.MaxClockSkew}; it must be positive.");
        }
    }
}
