using FaaSCache.Host.Demo;
using FaaSCache.Host.Start;

namespace FaaSCache.Host;

/// <summary>The FaaSCache host's command line.</summary>
public static class Program
{
    /// <summary>Entry point.</summary>
    public static async Task<int> Main(string[] args)
    {
        if (args.Length == 0 || args[0] is "-h" or "--help" or "help")
        {
            PrintUsage();
            return args.Length == 0 ? 2 : 0;
        }

        try
        {
            return args[0] switch
            {
                "start" => await StartCommand.RunAsync(args[1..]),
                "demo" => await DemoCommand.RunAsync(args[1..]),
                "blob" => await BlobCommand.RunAsync(args[1..]),
                _ => Unknown(args[0]),
            };
        }
        catch (CommandLineException e)
        {
            await Console.Error.WriteLineAsync($"error: {e.Message}");
            PrintUsage();
            return 2;
        }
    }

    private static int Unknown(string command) => throw new CommandLineException($"unknown command '{command}'");

    private static void PrintUsage()
    {
        Console.WriteLine("""
            usage: FaaSCache.Host <command> [options]

            commands:
              start [--script-root <app folder>] [--port <p>] [--cache on|off] [--instance-id <id>]
                    [--workers-dir <dir>] [--blob-poll-interval <seconds>]
                   Runs a function app (host.json, local.settings.json, one folder per function with
                   function.json) as `func start` does: HTTP triggers on http://127.0.0.1:<p>/api/<function>
                   (default port 7071), blob triggers, blob bindings served through the cache.
              demo --connection <storage connection string> [--host-json <path>] [--shm <dir>]
                   Reads and writes blobs through a cachelet and prints where each read was served from.
              blob put <container/blob> <file|-> | blob get <container/blob> [file] | blob ls <container>
                   [--connection <storage connection string>]   (default: $AzureWebJobsStorage)
            """);
    }
}
