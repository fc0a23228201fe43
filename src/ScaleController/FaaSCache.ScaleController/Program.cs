using System.CommandLine;
using Microsoft.AspNetCore.Builder;

namespace FaaSCache.ScaleController;

/// <summary>The scale controller's entry point (usage errors exit 2, bad option values 3).</summary>
public static class Program
{
    /// <summary>Exit code of a command line that does not parse.</summary>
    public const int UsageError = 2;

    /// <summary>Exit code of options that parse but are not allowed.</summary>
    public const int BadOptions = 3;

    /// <summary>Entry point.</summary>
    public static async Task<int> Main(string[] args)
    {
        var parsed = ScaleControllerCommandLine.Create(RunAsync).Parse(args);
        // SIGTERM is the host's own to handle (flush async writes, leave the membership, stop workers, within
        // HostOptions.ShutdownTimeout): System.CommandLine's default would end the process 2 s after the signal with
        // exit code 143, abandoning a flush that storage is slow to take.
        int code = await parsed.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null });
        return parsed.Errors.Count > 0 ? UsageError : code;
    }

    private static async Task<int> RunAsync(ScaleControllerOptions options, bool statusView, CancellationToken cancellationToken)
    {
        WebApplication app;
        try
        {
            // The live table owns the console: log lines only go out when it is off.
            // ASP.NET Core's per-request lines only from Warning: the controller's own lines say what happens.
            app = ScaleControllerApp.Build(options, statusView, logging => logging
                .SetMinimumLevel(statusView ? LogLevel.None : LogLevel.Information)
                .AddFilter("Microsoft", statusView ? LogLevel.None : LogLevel.Warning));
        }
        catch (FaaSCacheConfigurationException e)
        {
            await Console.Error.WriteLineAsync("Bad options:" + Environment.NewLine + "  " + string.Join(Environment.NewLine + "  ", e.Failures));
            return BadOptions;
        }

        await using (app)
        {
            if (!statusView)
            {
                Console.WriteLine(options.Instances == InstanceSourceMode.Launch
                    ? $"Front door http://{options.ListenAddress}:{options.Port}/api/ , status http://{options.ListenAddress}:{options.Port}/scale/status , urgent votes (gRPC) http://{options.ListenAddress}:{options.GrpcPort}/"
                    : $"Membership mode (decides only, for the members of {options.AppName}'s membership blob): status http://{options.ListenAddress}:{options.Port}/scale/status , KEDA external scaler and urgent votes (gRPC) http://{options.ListenAddress}:{options.GrpcPort}/");
            }

            await app.RunAsync();
        }

        return 0;
    }
}
