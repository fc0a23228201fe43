namespace FaaSCache.Tools;

/// <summary><c>faascache</c>: the developer's tool beside the FaaSCache host.</summary>
public static class Program
{
    /// <summary>Exit code of a command line that does not parse.</summary>
    public const int UsageError = 2;

    /// <summary>Entry point.</summary>
    public static async Task<int> Main(string[] args)
    {
        RootCommand root = CreateRoot();
        ParseResult parsed = root.Parse(args);
        Kubernetes.KubernetesCommand.KeepOutputClean(parsed);
        try
        {
            // SIGTERM is the host's own to handle (flush async writes, leave the membership, stop workers, within
            // HostOptions.ShutdownTimeout): System.CommandLine's default would end the process 2 s after the signal with
            // exit code 143, abandoning a flush that storage is slow to take.
            int code = await parsed.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null, EnableDefaultExceptionHandler = false });
            return parsed.Errors.Count > 0 ? UsageError : code;
        }
        catch (OperationCanceledException)
        {
            return ToolErrors.Cancelled;
        }
        catch (Exception e)
        {
            // One line that says what was wrong and what to do; the stack only when asked for.
            await Console.Error.WriteLineAsync(ToolErrors.Describe(e, CommandPath(parsed.CommandResult.Command)));
            if (parsed.GetValue(Verbose))
            {
                await Console.Error.WriteLineAsync(e.ToString());
            }

            return ToolErrors.Failed;
        }
    }

    /// <summary>The whole command line: every command, its options and actions (docs/commands.md is its help).</summary>
    public static RootCommand CreateRoot()
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

        root.Options.Add(Verbose);
        return root;
    }

    /// <summary>Gets <c>--verbose</c>: a failed command prints its stack trace under its one-line error.</summary>
    public static Option<bool> Verbose { get; } = new("--verbose")
    {
        Description = "On a failure, print the stack trace under the one-line error.",
        Recursive = true,
    };

    private static string CommandPath(Command command)
    {
        var names = new List<string>();
        for (Command? c = command; c is not null and not RootCommand; c = c.Parents.OfType<Command>().FirstOrDefault())
        {
            names.Insert(0, c.Name);
        }

        return string.Join(' ', names);
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
