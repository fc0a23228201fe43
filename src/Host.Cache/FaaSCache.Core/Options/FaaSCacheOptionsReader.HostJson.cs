using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Configuration;
using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>Reading the section from a host.json file: the file's own errors (missing, unreadable, malformed, wrong version).</summary>
public static partial class FaaSCacheOptionsReader
{
    /// <summary>Loads a host.json file and reads its <c>extensions:faasCache</c> section (missing section = defaults).</summary>
    /// <param name="hostJsonPath">The path of host.json.</param>
    /// <returns>The options.</returns>
    /// <exception cref="FaaSCacheConfigurationException">
    /// The file is missing, unreadable or not valid JSON (the message names the file and the parser's reason),
    /// <c>version</c> is not "2.0", or the section is invalid (see <see cref="Read"/>).
    /// </exception>
    public static FaaSCacheOptions ReadHostJson(string hostJsonPath)
    {
        ArgumentException.ThrowIfNullOrEmpty(hostJsonPath);
        string fullPath = Path.GetFullPath(hostJsonPath);

        IConfigurationRoot root;
        try
        {
            using FileStream stream = File.OpenRead(fullPath);
            root = new ConfigurationBuilder().AddJsonStream(stream).Build();
        }
        catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, "the file does not exist.", ex);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, "the file cannot be read: " + ex.Message, ex);
        }
        catch (Exception ex) when (ex is JsonException or FormatException or InvalidDataException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, ParserReason(ex), ex);
        }

        try
        {
            IConfigurationSection version = root.GetSection("version");
            if (HasChildren(version) || (version.Value is { } v && v != HostJsonVersion))
            {
                throw new FaaSCacheConfigurationException(version.Path, Show(version), $"allowed value is {HostJsonVersion}");
            }

            IConfigurationSection extensions = root.GetSection("extensions");
            if (!string.IsNullOrEmpty(extensions.Value))
            {
                throw new FaaSCacheConfigurationException(extensions.Path, extensions.Value, "allowed values are objects");
            }

            return Read(root.GetSection(SectionPath));
        }
        catch (FaaSCacheConfigurationException ex) when (ex.FilePath is null)
        {
            throw ex.InFile(fullPath);
        }
    }

    private static void ReadEviction(IConfigurationSection section, string prefix, EvictionOptions eviction, Dictionary<string, string?> given)
    {
        foreach ((string name, IConfigurationSection child, string path) in Members(section, prefix, R.EvictionKeys))
        {
            switch (name)
            {
                case R.Policy:
                    eviction.Policy = ReadEnum<EvictionPolicy>(child, path, given);
                    break;
                case R.SizeThresholdBytes:
                    eviction.SizeThresholdBytes = ReadLong(child, path, R.AllowedSizeThresholdBytes, given);
                    break;
                case R.Ttl:
                    eviction.Ttl = ReadOptionalTimeSpan(child, path, R.AllowedTtl, given);
                    break;
                default:
                    throw new InvalidOperationException($"Key '{name}' is in the schema but not read.");
            }
        }
    }

    private static void ReadPrewarm(IConfigurationSection section, string prefix, PrewarmOptions prewarm, Dictionary<string, string?> given)
    {
        foreach ((string name, IConfigurationSection child, string path) in Members(section, prefix, R.PrewarmKeys))
        {
            switch (name)
            {
                case R.Enabled:
                    prewarm.Enabled = ReadBool(child, path, given);
                    break;
                case R.HitRateThreshold:
                    prewarm.HitRateThreshold = ReadDouble(child, path, R.AllowedHitRateThreshold, given);
                    break;
                default:
                    throw new InvalidOperationException($"Key '{name}' is in the schema but not read.");
            }
        }
    }

    private static void ReadScaling(IConfigurationSection section, string prefix, ScalingOptions scaling, Dictionary<string, string?> given)
    {
        foreach ((string name, IConfigurationSection child, string path) in Members(section, prefix, R.ScalingKeys))
        {
            switch (name)
            {
                case R.Compute:
                    scaling.Compute = ReadBool(child, path, given);
                    break;
                case R.CacheSize:
                    scaling.CacheSize = ReadBool(child, path, given);
                    break;
                case R.TargetConcurrency:
                    scaling.TargetConcurrency = ReadInt(child, path, R.AllowedTargetConcurrency, given);
                    break;
                case R.TargetLatency:
                    scaling.TargetLatency = ReadOptionalTimeSpan(child, path, R.AllowedTargetLatency, given);
                    break;
                case R.LowAccessRate:
                    scaling.LowAccessRate = ReadDouble(child, path, R.AllowedLowAccessRate, given);
                    break;
                case R.ProfileInterval:
                    scaling.ProfileInterval = ReadTimeSpan(child, path, R.AllowedProfileInterval, given);
                    break;
                case R.Bandwidth:
                    scaling.Bandwidth = ReadBool(child, path, given);
                    break;
                default:
                    throw new InvalidOperationException($"Key '{name}' is in the schema but not read.");
            }
        }
    }

    private static void ReadMembership(IConfigurationSection section, string prefix, MembershipOptions membership, Dictionary<string, string?> given)
    {
        foreach ((string name, IConfigurationSection child, string path) in Members(section, prefix, R.MembershipKeys))
        {
            switch (name)
            {
                case R.HeartbeatInterval:
                    membership.HeartbeatInterval = ReadTimeSpan(child, path, R.AllowedHeartbeatInterval, given);
                    break;
                case R.FailureTimeout:
                    membership.FailureTimeout = ReadTimeSpan(child, path, R.AllowedFailureTimeoutFormat, given);
                    break;
                case R.VirtualNodes:
                    membership.VirtualNodes = ReadInt(child, path, R.AllowedVirtualNodes, given);
                    break;
                case R.WatchInterval:
                    membership.WatchInterval = ReadTimeSpan(child, path, R.AllowedWatchInterval, given);
                    break;
                default:
                    throw new InvalidOperationException($"Key '{name}' is in the schema but not read.");
            }
        }
    }
}
