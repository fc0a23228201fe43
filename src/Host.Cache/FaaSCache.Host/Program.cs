using FaaSCache.Host.Demo;

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
                "demo" => await DemoCommand.RunAsync(args[1..]),
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
              demo --connection <storage connection string> [--host-json <path>] [--shm <dir>]
                   Reads and writes blobs through a cachelet and prints where each read was served from.
            """);
    }
}
