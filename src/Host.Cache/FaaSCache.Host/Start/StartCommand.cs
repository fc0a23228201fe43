using FaaSCache.Host.AppModel;
using FaaSCache.Host.Workers;
using FaaSCache.Options;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Options;

namespace FaaSCache.Host.Start;

/// <summary><c>start --script-root &lt;app&gt; --port &lt;p&gt;</c>: runs a function app, as Core Tools' <c>func start</c> does.</summary>
public static class StartCommand
{
    private static readonly string[] SupportedBindings = ["httpTrigger", "http", "blob", "blobTrigger"];

    /// <summary>Runs until Ctrl+C / SIGTERM.</summary>
    public static async Task<int> RunAsync(HostSettings settings)
    {
        FunctionApp app;
        try
        {
            app = FunctionAppLoader.Load(settings.ScriptRoot, settings.WorkersDirectory);
            CheckBindings(app);
        }
        catch (AppLoadException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }

        await using WebApplication web = HostApplication.Build(app, settings);
        try
        {
            await web.StartAsync();
        }
        catch (IOException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot listen on port {settings.Port}: {e.Message}");
            return 1;
        }
        catch (OptionsValidationException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {string.Join(" ", e.Failures)}");
            return 1;
        }
        catch (FaaSCacheConfigurationException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }

        Uri httpUri = Addresses(web, settings.Port);
        Uri grpcUri = web.Services.GetRequiredService<WorkerHostedService>().GrpcUri!;
        Console.WriteLine(Banner.Describe(app, settings, web.Services, httpUri, grpcUri));

        // On Ctrl+C / SIGTERM: workers end first (WorkerHostedService), then the server, then the
        // cachelet's lifetime disposes it: async writes flushed, maps removed.
        await web.WaitForShutdownAsync();
        return 0;
    }

    private static void CheckBindings(FunctionApp app)
    {
        foreach (FunctionDefinition f in app.Functions)
        {
            BindingDefinition? unsupported = f.Bindings.FirstOrDefault(b => !SupportedBindings.Contains(b.Type, StringComparer.OrdinalIgnoreCase));
            if (unsupported is not null)
            {
                throw new AppLoadException(
                    $"'{Path.Combine(f.Directory, "function.json")}': binding '{unsupported.Name}' has type '{unsupported.Type}', which this host does not serve (supported: {string.Join(", ", SupportedBindings)}).");
            }
        }
    }

    private static Uri Addresses(WebApplication web, int port)
    {
        var addresses = web.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a)).ToList();
        return port != 0 ? addresses.First(a => a.Port == port) : addresses[0];
    }
}
