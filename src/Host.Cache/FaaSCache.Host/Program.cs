using System.CommandLine;

namespace FaaSCache.Host;

/// <summary>The FaaSCache host's command line (System.CommandLine: <c>--help</c> on every command; usage errors exit 2).</summary>
public static class Program
{
    /// <summary>Exit code of a command line that does not parse.</summary>
    public const int UsageError = 2;

    /// <summary>Entry point.</summary>
    public static async Task<int> Main(string[] args)
    {
        var root = new RootCommand("FaaSCache host: runs an Azure Functions app (function.json model) with its blob bindings served through the FaaSCache cache.")
        {
            StartCommandLine.Create((settings, _) => StartCommand.RunAsync(settings)),
        };
        ParseResult parsed = root.Parse(args);
        // SIGTERM is the host's own to handle (flush async writes, leave the membership, stop workers, within
        // HostOptions.ShutdownTimeout): System.CommandLine's default would end the process 2 s after the signal with
        // exit code 143, abandoning a flush that storage is slow to take.
        int code = await parsed.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null });
        return parsed.Errors.Count > 0 ? UsageError : code;
    }
}
