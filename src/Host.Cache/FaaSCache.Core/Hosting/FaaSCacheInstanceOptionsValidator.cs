namespace FaaSCache.Hosting;

/// <summary>Checks <see cref="FaaSCacheInstanceOptions"/>; every failure names the setting, the value and what is allowed.</summary>
public sealed class FaaSCacheInstanceOptionsValidator : OptionsValidator<FaaSCacheInstanceOptions>
{
    private const string Section = FaaSCacheInstanceOptions.SectionName;

    /// <inheritdoc />
    protected override void Check(FaaSCacheInstanceOptions options, List<string> failures)
    {
        if (!FaaSCacheInstanceOptions.IsValidId(options.InstanceId))
        {
            failures.Add($"Invalid value '{options.InstanceId}' for '{Section}:InstanceId': allowed values are non-empty names of letters, digits, '-', '_' and '.'.");
        }

        if (string.IsNullOrWhiteSpace(options.AppName))
        {
            failures.Add($"Invalid value '' for '{Section}:AppName': allowed values are non-empty app names.");
        }

        if (string.IsNullOrWhiteSpace(options.StorageConnection))
        {
            // The value would hold the account key: name the setting, never echo it.
            failures.Add(
                $"FaaSCache needs the app's storage account: set the app setting '{FaaSCacheInstanceOptions.StorageSetting}' (or the connection string " +
                $"'ConnectionStrings:{FaaSCacheInstanceOptions.StorageSetting}') to a storage connection string, e.g. 'UseDevelopmentStorage=true' for Azurite.");
        }

        if (!IPAddress.TryParse(options.PeerAddress, out _))
        {
            failures.Add($"Invalid value '{options.PeerAddress}' for '{Section}:PeerAddress': allowed values are IP addresses.");
        }

        if (options.PeerPort is < 0 or > 65535)
        {
            failures.Add($"Invalid value '{options.PeerPort}' for '{Section}:PeerPort': allowed values are 0 (a free port) or port numbers 1..65535.");
        }

        if (options.SharedMemoryDirectories.Any(string.IsNullOrWhiteSpace))
        {
            failures.Add($"Invalid value '' in '{SharedMemory.SharedMemoryStore.DirectoriesSetting}': allowed values are comma-separated folder paths.");
        }

        if (options.ScaleController is { Length: > 0 } controller
            && !(Uri.TryCreate(controller, UriKind.Absolute, out Uri? uri) && uri.Scheme is "http" or "https"))
        {
            failures.Add($"Invalid value '{controller}' for '{Section}:ScaleController': allowed values are http:// or https:// addresses such as http://127.0.0.1:7080/.");
        }
    }
}
