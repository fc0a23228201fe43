using System.CommandLine;

namespace FaaSCache.Tools;

/// <summary><c>faascache</c>: the developer's tool beside the FaaSCache host.</summary>
public static class Program
{
    /// <summary>Exit code of a command line that does not parse.</summary>
    public const int UsageError = 2;

    /// <summary>Entry point.</summary>
    public static async Task<int> Main(string[] args)
    {
        var root = new RootCommand("faascache: runs a function app through the FaaSCache host (start), and developer commands beside it (storage, a cachelet tour, a running host's state).")
        {
            StartAppCommand.Create(),
            BlobCommand.Create(),
            DemoCommand.Create(),
            HostCommand.Create(),
            WhatIfCommand.Create(),
            TraceCommand.Create(),
            StorageCommand.Create(),
            Kubernetes.KubernetesCommand.Create(),
        };
        foreach (Command helper in ScriptHelpers.Create())
        {
            root.Subcommands.Add(helper);
        }

        ParseResult parsed = root.Parse(args);
        Kubernetes.KubernetesCommand.KeepOutputClean(parsed);
        // SIGTERM is the host's own to handle (flush async writes, leave the membership, stop workers, within
        // HostOptions.ShutdownTimeout): System.CommandLine's default would end the process 2 s after the signal with
        // exit code 143, abandoning a flush that storage is slow to take.
        int code = await parsed.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null });
        return parsed.Errors.Count > 0 ? UsageError : code;
    }

    /// <summary>The storage connection: <paramref name="given"/>, else <c>$AzureWebJobsStorage</c>; null when neither is set.</summary>
    public static string? Connection(string? given)
        => given is { Length: > 0 } ? given : Environment.GetEnvironmentVariable("AzureWebJobsStorage") is { Length: > 0 } env ? env : null;

    /// <summary>The <c>--connection</c> option shared by the storage commands.</summary>
    public static Option<string> ConnectionOption() => new("--connection")
    {
        Description = "Storage connection string (default: $AzureWebJobsStorage; UseDevelopmentStorage=true works for Azurite).",
    };
}
