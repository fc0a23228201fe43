using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Options;

namespace FaaSCache.Host.Start;

/// <summary><c>start --script-root &lt;app&gt; --port &lt;p&gt;</c>: runs a function app, as Core Tools' <c>func start</c> does.</summary>
public static class StartCommand
{
    /// <summary>Runs until Ctrl+C / SIGTERM.</summary>
    public static async Task<int> RunAsync(HostSettings settings)
    {
        FunctionApp app;
        try
        {
            app = FunctionAppLoader.Load(settings.ScriptRoot, settings.WorkersDirectory);
        }
        catch (AppLoadException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }

        // No storage, no stack trace: start the development storage when it is not running, or say in one line what to check.
        DevelopmentStorage storage;
        try
        {
            storage = await DevelopmentStorage.EnsureAsync(app.StorageConnection, app.RootDirectory, CancellationToken.None);
        }
        catch (StorageUnreachableException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: {e.Message}");
            return 1;
        }

        using DevelopmentStorage startedStorage = storage;
        if (storage.Description is { } started)
        {
            Console.WriteLine($"FaaSCache host: {started}");
        }

        WebApplication built;
        try
        {
            built = HostApplication.Build(app, settings);
        }
        catch (Exception e) when (e is KeyStoreException or IOException)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }

        await using WebApplication web = built;
        try
        {
            await web.StartAsync();
        }
        catch (IOException e)
        {
            // The port that could not be bound, which is not always the HTTP one (the worker, SDK and peer ports too).
            System.Text.RegularExpressions.Match failed = System.Text.RegularExpressions.Regex.Match(e.Message, @"https?://[^\s:/]+:(\d+)");
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot listen on port {(failed.Success ? failed.Groups[1].Value : settings.Port.ToString(System.Globalization.CultureInfo.InvariantCulture))}: {e.Message}");
            return 1;
        }
        catch (FaaSCacheConfigurationException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }
        catch (Exception e) when (e is Azure.RequestFailedException or StorageUnavailableException)
        {
            // Storage answered, but not as an account this host can use (a wrong key, a missing account...).
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: storage refused the host ({FirstLine(e.Message)}): check the account name and key in AzureWebJobsStorage.");
            return 1;
        }

        // A worker-indexed app's functions come from its worker, which runs now; the function.json ones are known already.
        try
        {
            _ = await app.Indexed.WaitAsync(WorkerChannel.MetadataTimeout + TimeSpan.FromSeconds(30), web.Lifetime.ApplicationStopping);
        }
        catch (Exception e) when (e is AppLoadException or TimeoutException)
        {
            web.Services.GetRequiredService<HostLifecycle>().Fail(e.Message);
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            await web.StopAsync();
            return 1;
        }
        catch (OperationCanceledException)
        {
            await web.StopAsync();
            return 0;
        }

        Uri httpUri = Addresses(web, settings.Port);
        Uri grpcUri = web.Services.GetRequiredService<WorkerHostedService>().GrpcUri!;
        IServiceProvider services = web.Services;
        Console.WriteLine(Banner.Describe(
            app,
            settings,
            services.GetRequiredService<SharedMemoryStore>(),
            services.GetRequiredService<IBlobStore>(),
            services.GetRequiredService<IOptions<FaaSCacheOptions>>().Value,
            services.GetService<MembershipDaemon>(),
            httpUri,
            grpcUri,
            services.GetService<FaaSCache.Host.BlobEndpoint.SdkEndpointAddress>()?.BlobEndpoint,
            services.GetRequiredService<KeyAuthorizer>() is { Enforced: true } keys ? keys.Store.Description : null));

        // On Ctrl+C / SIGTERM: workers end first (WorkerHostedService), then the server, then the
        // cachelet's lifetime disposes it: async writes flushed, maps removed.
        await web.WaitForShutdownAsync();
        return 0;
    }

    private static string FirstLine(string text) => text.Split('\n', 2)[0].Trim();

    private static Uri Addresses(WebApplication web, int port)
    {
        var addresses = web.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a)).ToList();
        return port != 0 ? addresses.First(a => a.Port == port) : addresses[0];
    }
}
