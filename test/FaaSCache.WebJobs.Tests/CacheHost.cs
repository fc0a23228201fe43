using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace FaaSCache.WebJobs.Tests;

/// <summary>
/// A real WebJobs host (<c>HostBuilder().ConfigureWebJobs(b =&gt; b.AddFaaSCache())</c>) against a shared Azurite, with
/// its own /dev/shm directory as the shared-memory root and its log lines captured.
/// </summary>
internal sealed class CacheHost(IHost host, TempShmDirectory shm, CapturingLoggerProvider logs) : IAsyncDisposable
{
    private bool _stopped;

    public IHost Host => host;

    public CapturingLoggerProvider Logs => logs;

    /// <summary>Gets &lt;shm root&gt;/AzureFunctions, where the maps live.</summary>
    public string MapDirectory => Path.Combine(shm.Path, SharedMemoryStore.MapFolderName);

    public IFunctionDataCache DataCache => Host.Services.GetRequiredService<IFunctionDataCache>();

    public Cachelet Cachelet => Host.Services.GetRequiredService<Cachelet>();

    /// <summary>Gets the job host, to invoke functions with <c>CallAsync</c>.</summary>
    public JobHost JobHost => (JobHost)Host.Services.GetRequiredService<IJobHost>();

    /// <summary>Builds and starts the host; <paramref name="settings"/> add to or (with a null value) remove from the defaults.</summary>
    public static async Task<CacheHost> StartAsync(
        AzuriteFixture azurite,
        IReadOnlyDictionary<string, string?>? settings = null,
        Action<IWebJobsBuilder>? configureWebJobs = null)
    {
        (IHost host, TempShmDirectory shm, CapturingLoggerProvider logs) = Build(azurite, settings, configureWebJobs);
        try
        {
            await host.StartAsync();
        }
        catch
        {
            host.Dispose();
            shm.Dispose();
            throw;
        }

        return new CacheHost(host, shm, logs);
    }

    /// <summary>Starts a host that must fail to start; returns the exception, the host and its folder cleaned up.</summary>
    public static async Task<Exception> StartFailsAsync(AzuriteFixture azurite, IReadOnlyDictionary<string, string?> settings)
    {
        (IHost host, TempShmDirectory shm, _) = Build(azurite, settings, configureWebJobs: null);
        try
        {
            Exception? error = await Record(() => host.StartAsync());
            if (error is null)
            {
                await host.StopAsync();
                throw new Xunit.Sdk.XunitException("The host started, but it should have refused the configuration.");
            }

            return error;
        }
        finally
        {
            host.Dispose();
            shm.Dispose();
        }
    }

    public IEnumerable<string> MapFiles() => Directory.Exists(MapDirectory) ? Directory.EnumerateFiles(MapDirectory) : [];

    /// <summary>Stops the host (the cachelet is disposed after the job host stops).</summary>
    public async Task StopAsync()
    {
        _stopped = true;
        await Host.StopAsync();
    }

    public async ValueTask DisposeAsync()
    {
        if (!_stopped)
        {
            await Host.StopAsync();
        }

        Host.Dispose();
        shm.Dispose();
    }

    private static (IHost Host, TempShmDirectory Shm, CapturingLoggerProvider Logs) Build(
        AzuriteFixture azurite,
        IReadOnlyDictionary<string, string?>? settings,
        Action<IWebJobsBuilder>? configureWebJobs)
    {
        var shm = new TempShmDirectory("faascache-webjobs");
        var logs = new CapturingLoggerProvider();
        var values = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase)
        {
            ["AzureWebJobsStorage"] = azurite.ConnectionString,
            [SharedMemoryStore.DirectoriesSetting] = shm.Path,
            [FaaSCacheWebJobsBuilderExtensions.InstanceIdSetting] = "webjobs-test-" + Guid.NewGuid().ToString("N")[..8],
            // Each host its own app (a membership of its own) unless a test puts several in one.
            ["FaaSCache:AppName"] = "webjobs-app-" + Guid.NewGuid().ToString("N")[..8],
        };
        foreach ((string key, string? value) in settings ?? new Dictionary<string, string?>())
        {
            if (value is null)
            {
                values.Remove(key);
            }
            else
            {
                values[key] = value;
            }
        }

        configureWebJobs ??= b => b.AddFaaSCache();
        IHost host = new HostBuilder()
            .ConfigureAppConfiguration(c => c.AddInMemoryCollection(values))
            .ConfigureLogging(l => l.SetMinimumLevel(LogLevel.Debug).AddProvider(logs))
            .ConfigureWebJobs(b =>
            {
                // No functions unless a test names them (FunctionTypes after this wins): WebJobs' own locator would index
                // every function class of this assembly, blob-bound ones too, in hosts that load no blob extension.
                b.Services.AddSingleton<ITypeLocator>(new FunctionTypes());
                configureWebJobs(b);
            })
            .Build();
        return (host, shm, logs);
    }

    /// <summary>The function classes a host indexes.</summary>
    internal sealed class FunctionTypes(params Type[] types) : ITypeLocator
    {
        public IReadOnlyList<Type> GetTypes() => types;
    }

    private static async Task<Exception?> Record(Func<Task> action)
    {
        try
        {
            await action();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }
}
