using System.CommandLine.Parsing;
using FaaSCache.Host.Start;

namespace FaaSCache.Tools;

/// <summary>
/// <c>faascache start</c>: runs a function app from its folder, as Core Tools' <c>func start</c> does. The options are
/// the host's own (<see cref="StartCommandLine"/>: the same parsing, help and errors), <c>--script-root</c> defaulting to
/// the current folder. A C# project folder (a <c>*.csproj</c> and no <c>worker.config.json</c>) is built first
/// (<c>dotnet build -c Release</c>) and the host runs its build output, where the Worker.Sdk put
/// <c>worker.config.json</c>, <c>functions.metadata</c> and the app's dll. The host then runs in this process
/// (<see cref="StartCommand.RunAsync"/>), so it finds the language workers in <c>workers/&lt;language&gt;/</c> beside
/// <c>faascache.dll</c>, where the build and the tool package put them.
/// </summary>
public static class StartAppCommand
{
    private const string ScriptRootOption = "--script-root";

    /// <summary>Creates the command.</summary>
    public static Command Create()
    {
        // The host's own start command: its options, defaults, validation and help. Only the action is this tool's.
        Command start = StartCommandLine.Create((_, _) => Task.FromResult(0));
        start.Description = "Runs a function app from its folder as Core Tools' `func start` does, with blob bindings served through the cache. "
            + "A C# isolated project folder (*.csproj) is built first (dotnet build -c Release) and run from its build output.";
        start.Options.Add(EnableAuth);
        start.SetAction((result, cancellationToken) => RunAsync(LocalDevelopment(StartArguments(result), result.GetValue(EnableAuth)), cancellationToken));
        return start;
    }

    // As Core Tools' func start: keys are not checked unless asked for (--enable-auth, or the host's own --auth on).
    private static readonly Option<bool> EnableAuth = new("--enable-auth")
    {
        Description = "Check function keys and the master key as a deployed host does (func start --enableAuth); without it, as func start, no key is checked.",
    };

    /// <summary>
    /// The host's arguments from <paramref name="arguments"/>: <c>--enable-auth</c> (and its value, if given) taken out,
    /// and <c>--auth on</c> with it, else <c>--auth off</c>, unless <c>--auth</c> is given.
    /// </summary>
    public static string[] LocalDevelopment(IReadOnlyList<string> arguments, bool enable)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        var result = new List<string>(arguments.Count + 2);
        for (int i = 0; i < arguments.Count; i++)
        {
            if (arguments[i] == EnableAuth.Name)
            {
                if (i + 1 < arguments.Count && arguments[i + 1] is "true" or "false" or "True" or "False")
                {
                    i++;
                }

                continue;
            }

            result.Add(arguments[i]);
        }

        if (!result.Contains("--auth", StringComparer.Ordinal))
        {
            result.AddRange(["--auth", enable ? "on" : "off"]);
        }

        return [.. result];
    }

    /// <summary>
    /// The C# project of <paramref name="root"/>: null when it is not a C# project folder (no <c>*.csproj</c>, or a
    /// <c>worker.config.json</c> there already: a build output, run as it is); throws when there are several.
    /// </summary>
    public static string? FindProject(string root)
    {
        if (!Directory.Exists(root) || File.Exists(Path.Combine(root, "worker.config.json")))
        {
            return null;
        }

        string[] projects = Directory.GetFiles(root, "*.csproj");
        return projects.Length switch
        {
            0 => null,
            1 => projects[0],
            _ => throw new CommandLineException(
                $"'{root}' holds {projects.Length} C# projects ({string.Join(", ", projects.Select(Path.GetFileName).Order(StringComparer.Ordinal))}): "
                + "run `faascache start` in a folder with one, or pass --script-root <its build output>."),
        };
    }

    /// <summary><paramref name="arguments"/> (start's, without the word start) with <c>--script-root</c> set to <paramref name="scriptRoot"/>.</summary>
    public static string[] WithScriptRoot(IReadOnlyList<string> arguments, string scriptRoot)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        var result = new List<string>(arguments.Count + 4);
        for (int i = 0; i < arguments.Count; i++)
        {
            if (arguments[i] == ScriptRootOption)
            {
                i++; // and its value
                continue;
            }

            result.Add(arguments[i]);
        }

        result.Add(ScriptRootOption);
        result.Add(scriptRoot);
        return [.. result];
    }

    /// <summary>start's arguments as parsed (options split from their values), without the word start.</summary>
    private static string[] StartArguments(ParseResult result)
    {
        IReadOnlyList<Token> tokens = result.Tokens;
        int start = 0;
        while (start < tokens.Count && !(tokens[start].Type == TokenType.Command && tokens[start].Value == "start"))
        {
            start++;
        }

        return [.. tokens.Skip(start + 1).Select(t => t.Value)];
    }

    private static async Task<int> RunAsync(string[] arguments, CancellationToken cancellationToken)
    {
        try
        {
            HostSettings settings = StartCommandLine.Parse(arguments);
            if (FindProject(settings.ScriptRoot) is { } project)
            {
                string? output = await BuildAsync(project, cancellationToken);
                if (output is null)
                {
                    return 1;
                }

                // Parsed again, so that every default that follows from the script root is the host's (the app name: the
                // assembly's, for a build output).
                settings = StartCommandLine.Parse(WithScriptRoot(arguments, output));
                Say($"running the build output {output} (app {settings.AppName})");
            }

            return await StartCommand.RunAsync(settings);
        }
        catch (CommandLineException e)
        {
            await Console.Error.WriteLineAsync($"faascache start: {e.Message}");
            return Program.UsageError;
        }
    }

    /// <summary>
    /// <c>dotnet build -c Release</c> of <paramref name="project"/> (its output shown as it comes), then the output folder
    /// as MSBuild computes it (<c>TargetDir</c>: bin/Release/&lt;tfm&gt;/), with the app's settings files copied there when
    /// the build did not; null, having said why, when the build fails or its output is not a C# isolated app.
    /// </summary>
    private static async Task<string?> BuildAsync(string project, CancellationToken cancellationToken)
    {
        string folder = Path.GetDirectoryName(project)!;
        Say($"dotnet build {project} -c Release");
        (int code, _) = await DotnetAsync(["build", project, "-c", "Release", "-nologo"], folder, capture: false, cancellationToken);
        if (code != 0)
        {
            await Console.Error.WriteLineAsync($"faascache start: the build of {project} failed (exit code {code}; its output is above).");
            return null;
        }

        (code, string targetDir) = await DotnetAsync(["msbuild", project, "-nologo", "-p:Configuration=Release", "-getProperty:TargetDir"], folder, capture: true, cancellationToken);
        string output = targetDir.Trim();
        if (code != 0 || output.Length == 0 || !Directory.Exists(output))
        {
            await Console.Error.WriteLineAsync($"faascache start: cannot find the build output of {project} (msbuild -getProperty:TargetDir said '{output}', exit code {code}).");
            return null;
        }

        output = Path.TrimEndingDirectorySeparator(output);
        if (!File.Exists(Path.Combine(output, "worker.config.json")))
        {
            await Console.Error.WriteLineAsync(
                $"faascache start: the build output {output} has no worker.config.json: {Path.GetFileName(project)} is not an Azure Functions isolated worker app "
                + "(it needs <PackageReference Include=\"Microsoft.Azure.Functions.Worker.Sdk\" /> and <AzureFunctionsVersion>v4</AzureFunctionsVersion>).");
            return null;
        }

        // func init's project copies both to the output; a project that does not still has them in its folder.
        foreach (string file in new[] { "local.settings.json", "host.json" })
        {
            string source = Path.Combine(folder, file);
            string target = Path.Combine(output, file);
            if (File.Exists(source) && !File.Exists(target))
            {
                File.Copy(source, target);
                Say($"copied {file} to the build output (the project does not copy it)");
            }
        }

        return output;
    }

    private static async Task<(int Code, string Output)> DotnetAsync(IEnumerable<string> arguments, string workingDirectory, bool capture, CancellationToken cancellationToken)
    {
        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath && File.Exists(hostPath) ? hostPath : "dotnet";
        var start = new ProcessStartInfo(dotnet)
        {
            UseShellExecute = false,
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = capture,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"cannot start {dotnet}");
        try
        {
            string output = capture ? await process.StandardOutput.ReadToEndAsync(cancellationToken) : string.Empty;
            await process.WaitForExitAsync(cancellationToken);
            return (process.ExitCode, output);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }
    }

    private static void Say(string message) => Console.WriteLine($"[faascache] {message}");
}
