namespace FaaSCache.Storage;

/// <summary>
/// What a storage account costs, as the cache's decisions and the simulator see it: the latency to the first byte of a
/// small read, a version check (a conditional request answered 304), a small write, and the download rate one
/// instance gets. Measured by <see cref="StorageProbe"/> against any account, or named: the paper's storage
/// (<see cref="Paper"/>).
/// </summary>
public sealed record StorageProfile
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true };

    /// <summary>Gets the profile's name (<c>measured</c>, <c>paper</c>, or the account it was probed on).</summary>
    public required string Name { get; init; }

    /// <summary>Gets the time to the first byte of a small (4 B .. 1 KB) read, in milliseconds.</summary>
    public required double FirstByteMs { get; init; }

    /// <summary>Gets the time of a version check (a conditional GET answered 304), in milliseconds.</summary>
    public required double VersionCheckMs { get; init; }

    /// <summary>Gets the time of a small write (a 1 KB upload), in milliseconds.</summary>
    public required double WriteMs { get; init; }

    /// <summary>Gets the download rate one instance gets for a large object, in bytes per second.</summary>
    public required double BandwidthBytesPerSecond { get; init; }

    /// <summary>Gets where the numbers come from (a probe's account and time, or a paper's section).</summary>
    public string Source { get; init; } = string.Empty;

    /// <summary>
    /// The paper's storage (Faa$T §3.2 and §6.1: Azure Blob Storage from Standard_DS4_v2 VMs): a 4-byte read 10 ms,
    /// verifying a version under 5 ms (taken as 5), 35 MB in 500 ms, 90 MB/s per instance for large objects. The paper
    /// gives no small-write latency; its simulator charged writes as storage writes with and without the cache alike, so
    /// the small-read figure stands in for it.
    /// </summary>
    public static StorageProfile Paper { get; } = new()
    {
        Name = "paper",
        FirstByteMs = 10,
        VersionCheckMs = 5,
        WriteMs = 10,
        BandwidthBytesPerSecond = 90e6,
        Source = "Faa$T (SoCC'21) §3.2 and §6.1: 4-byte read 10 ms, version check < 5 ms, 35 MB in 500 ms, 90 MB/s per instance",
    };

    /// <summary>The time to read <paramref name="bytes"/> whole: the first byte, then the rest at the instance's rate.</summary>
    public double ReadMs(long bytes) => FirstByteMs + (bytes / BandwidthBytesPerSecond * 1000);

    /// <summary>Reads a profile written by <see cref="Save"/> (or by hand); a bad file names itself and what is wrong.</summary>
    public static StorageProfile Load(string path)
    {
        StorageProfile? profile;
        try
        {
            profile = JsonSerializer.Deserialize<StorageProfile>(File.ReadAllText(path), Json);
        }
        catch (Exception e) when (e is JsonException or IOException or UnauthorizedAccessException)
        {
            throw new InvalidDataException($"'{path}' is not a storage profile ({e.Message}); write one with `faascache storage probe --out {path}`.", e);
        }

        if (profile is null || profile.FirstByteMs <= 0 || profile.VersionCheckMs <= 0 || profile.WriteMs <= 0 || profile.BandwidthBytesPerSecond <= 0)
        {
            throw new InvalidDataException(
                $"'{path}': a storage profile needs positive firstByteMs, versionCheckMs, writeMs and bandwidthBytesPerSecond (got {JsonSerializer.Serialize(profile, Json)}).");
        }

        return profile;
    }

    /// <summary>Writes the profile as JSON.</summary>
    public void Save(string path) => File.WriteAllText(path, JsonSerializer.Serialize(this, Json));

    /// <summary>One line: the four figures.</summary>
    public override string ToString()
        => FormattableString.Invariant($"{Name}: first byte {FirstByteMs:0.00} ms, version check {VersionCheckMs:0.00} ms, write {WriteMs:0.00} ms, {BandwidthBytesPerSecond / 1e6:0.0} MB/s per instance");

    /// <summary>Serializer options for profiles.</summary>
    [JsonIgnore]
    public static JsonSerializerOptions JsonOptions => Json;
}
