using CliWrap;
using CliWrap.Buffered;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// Runs the iproute2 tools (ip, tc) and captures their output, so that a failure names the command line and what the
/// tool wrote to stderr instead of surfacing as a bare exit code.
/// </summary>
internal static class CommandRunner
{
    private static readonly string[] FallbackDirectories = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

    /// <summary>The result of one command: its exit code and what it wrote.</summary>
    internal sealed record Result(string CommandLine, int ExitCode, string StandardOutput, string StandardError)
    {
        public bool Succeeded => ExitCode == 0;

        public NetworkEmulationException ToException() => new(
            $"`{CommandLine}` failed with exit code {ExitCode}: {(StandardError.Trim().Length > 0 ? StandardError.Trim() : StandardOutput.Trim())}");
    }

    /// <summary>Runs <paramref name="tool"/> and throws <see cref="NetworkEmulationException"/> when it exits non-zero.</summary>
    public static async Task<string> RunAsync(string tool, IReadOnlyList<string> arguments, CancellationToken cancellationToken)
    {
        var result = await TryRunAsync(tool, arguments, cancellationToken).ConfigureAwait(false);
        return result.Succeeded ? result.StandardOutput : throw result.ToException();
    }

    /// <summary>Runs <paramref name="tool"/> and returns its result whatever the exit code (for steps that may find nothing to do).</summary>
    public static async Task<Result> TryRunAsync(string tool, IReadOnlyList<string> arguments, CancellationToken cancellationToken)
    {
        var path = FindTool(tool) ?? throw new NetworkEmulationException(
            $"`{tool}` was not found on PATH or in {string.Join(", ", FallbackDirectories)}: install iproute2 (bash scripts/setup.sh).");
        var commandLine = $"{tool} {string.Join(' ', arguments)}";
        try
        {
            var result = await Cli.Wrap(path)
                .WithArguments(arguments)
                .WithValidation(CommandResultValidation.None)
                .ExecuteBufferedAsync(cancellationToken)
                .ConfigureAwait(false);
            return new Result(commandLine, result.ExitCode, result.StandardOutput, result.StandardError);
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            throw new NetworkEmulationException($"`{commandLine}` could not be started: {e.Message}", e);
        }
    }

    /// <summary>The full path of <paramref name="tool"/> (PATH first, then the sbin directories root's PATH may lack), or null.</summary>
    public static string? FindTool(string tool)
    {
        var path = Environment.GetEnvironmentVariable("PATH") ?? string.Empty;
        foreach (var directory in path.Split(':', StringSplitOptions.RemoveEmptyEntries).Concat(FallbackDirectories))
        {
            var candidate = Path.Combine(directory, tool);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        return null;
    }
}
