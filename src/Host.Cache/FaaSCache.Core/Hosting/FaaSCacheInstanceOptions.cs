namespace FaaSCache.Hosting;

/// <summary>
/// Who this cachelet is, where it keeps its maps and where the app's storage is: the settings of one host instance, as
/// opposed to host.json's <see cref="Options.FaaSCacheOptions"/>, which are the app's. Bound from the configuration
/// section <c>FaaSCache</c> (e.g. <c>FaaSCache:InstanceId</c>); what that section leaves unset comes from the app
/// settings the Functions host uses (<c>AzureWebJobsStorage</c>, <c>FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES</c>,
/// <c>WEBSITE_INSTANCE_ID</c>, <c>WEBSITE_SITE_NAME</c>).
/// </summary>
public sealed class FaaSCacheInstanceOptions
{
    /// <summary>The configuration section of these options.</summary>
    public const string SectionName = "FaaSCache";

    /// <summary>The app setting naming the storage account (a connection string).</summary>
    public const string StorageSetting = "AzureWebJobsStorage";

    /// <summary>The App Service instance id, used when <see cref="InstanceId"/> is not set.</summary>
    public const string WebsiteInstanceIdSetting = "WEBSITE_INSTANCE_ID";

    /// <summary>The App Service app name, used when <see cref="AppName"/> is not set.</summary>
    public const string WebsiteSiteNameSetting = "WEBSITE_SITE_NAME";

    /// <summary>Gets or sets this instance's id: it names its shared-memory journal and its membership entry.</summary>
    public string? InstanceId { get; set; }

    /// <summary>Gets or sets the app's name: instances of one app form one cache (membership blob, peer key).</summary>
    public string? AppName { get; set; }

    /// <summary>Gets or sets the shared-memory roots (maps go to <c>&lt;root&gt;/AzureFunctions</c>); empty means <c>/dev/shm</c>.</summary>
    public IList<string> SharedMemoryDirectories { get; set; } = [];

    /// <summary>Gets or sets the storage connection string (a secret: never printed).</summary>
    public string? StorageConnection { get; set; }

    /// <summary>Gets or sets a value indicating whether this instance joins its app's other instances as one cache.</summary>
    public bool Membership { get; set; }

    /// <summary>Gets or sets the address the peer service binds to and advertises.</summary>
    public string PeerAddress { get; set; } = IPAddress.Loopback.ToString();

    /// <summary>Gets or sets the peer service's port; 0 picks a free one at start-up.</summary>
    public int PeerPort { get; set; }

    /// <summary>Gets or sets the scale controller's gRPC address (urgent votes go there); null when none runs.</summary>
    public string? ScaleController { get; set; }

    /// <summary>Gets the peer endpoint advertised in the membership list.</summary>
    public Uri PeerEndpoint
    {
        get
        {
            IPAddress address = IPAddress.Parse(PeerAddress);
            string host = address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? $"[{address}]" : address.ToString();
            return new Uri($"http://{host}:{PeerPort}/");
        }
    }

    /// <summary>Fills what the <c>FaaSCache</c> section left unset from the app settings in <paramref name="configuration"/>.</summary>
    internal void ApplyAppSettings(IConfiguration configuration)
    {
        StorageConnection ??= Setting(configuration, $"ConnectionStrings:{StorageSetting}") ?? Setting(configuration, StorageSetting);
        if (SharedMemoryDirectories.Count == 0 && Setting(configuration, SharedMemory.SharedMemoryStore.DirectoriesSetting) is { } roots)
        {
            SharedMemoryDirectories = roots.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        }

        InstanceId ??= Setting(configuration, WebsiteInstanceIdSetting) is { } website
            ? Sanitize(website)
            : Sanitize($"{Environment.MachineName}-{Environment.ProcessId}");
        AppName ??= Setting(configuration, WebsiteSiteNameSetting) ?? "app";
        if (PeerPort == 0 && Membership)
        {
            using var probe = new System.Net.Sockets.TcpListener(IPAddress.TryParse(PeerAddress, out IPAddress? a) ? a : IPAddress.Loopback, 0);
            probe.Start();
            PeerPort = ((IPEndPoint)probe.LocalEndpoint).Port;
        }
    }

    /// <summary>Whether <paramref name="id"/> is usable as an instance id (letters, digits, '-', '_' and '.').</summary>
    internal static bool IsValidId(string? id) =>
        !string.IsNullOrWhiteSpace(id) && id.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.');

    // Configuration first, then the environment (a bare host builder reads no environment variables).
    private static string? Setting(IConfiguration configuration, string name)
    {
        string? value = configuration[name];
        if (string.IsNullOrWhiteSpace(value) && !name.Contains(':', StringComparison.Ordinal))
        {
            value = Environment.GetEnvironmentVariable(name);
        }

        return string.IsNullOrWhiteSpace(value) ? null : value.Trim();
    }

    private static string Sanitize(string id)
    {
        var clean = new System.Text.StringBuilder(id.Length);
        foreach (char c in id)
        {
            clean.Append(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' ? c : '-');
        }

        return clean.Length == 0 ? "faascache" : clean.ToString();
    }
}
