namespace FaaSCache.Testing;

/// <summary>
/// A program run to its end as a child process (<see cref="ChildProcess"/>: output drained and captured, the tree
/// killed on timeout, cancellation or the test process's exit), and how it went.
/// </summary>
/// <param name="Program">The program and its first argument (the script), for messages.</param>
/// <param name="ExitCode">Its exit code.</param>
/// <param name="Stdout">What it wrote to stdout.</param>
/// <param name="Stderr">What it wrote to stderr.</param>
public sealed record ProcessRun(string Program, int ExitCode, string Stdout, string Stderr)
{
    // A run's output is what the caller parses: kept whole up to a bound no script here comes near.
    private const int MaxCapturedChars = 16 * 1024 * 1024;

    /// <summary>
    /// Runs <paramref name="program"/> with <paramref name="arguments"/>, <paramref name="environment"/> added to this
    /// process's, until it exits. Throws <see cref="TimeoutException"/> (the process tree killed) after
    /// <paramref name="timeout"/>, and <see cref="OperationCanceledException"/> (killed too) when cancelled.
    /// </summary>
    public static async Task<ProcessRun> RunAsync(
        string program,
        IEnumerable<string> arguments,
        TimeSpan timeout,
        IReadOnlyDictionary<string, string>? environment = null,
        string? workingDirectory = null,
        CancellationToken cancellationToken = default)
    {
        List<string> args = [.. arguments];
        string name = args.Count > 0 ? $"{program} {Path.GetFileName(args[0])}" : program;
        await using ChildProcess child = ChildProcess.Start(program, args, workingDirectory ?? Environment.CurrentDirectory, environment, MaxCapturedChars);
        bool exited;
        try
        {
            exited = await child.ExitedWithinAsync(timeout, cancellationToken);
        }
        catch (OperationCanceledException)
        {
            await child.KillAsync();
            throw;
        }

        if (!exited)
        {
            await child.KillAsync();
            throw new TimeoutException($"{name} ran longer than {timeout.TotalSeconds:0} s; killed.{Environment.NewLine}{child.CapturedOutput}");
        }

        return new ProcessRun(name, child.ExitCode!.Value, child.Stdout, child.Stderr);
    }

    /// <summary>The run for a failure message: how it exited and all it wrote.</summary>
    public override string ToString() =>
        $"{Program} exited {ExitCode}{Environment.NewLine}--- stderr ---{Environment.NewLine}{Stderr}--- stdout ---{Environment.NewLine}{Stdout}";
}
