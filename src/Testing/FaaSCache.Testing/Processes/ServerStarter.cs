namespace FaaSCache.Testing;

/// <summary>
/// The one way the fixtures start a server process (Azurite, redis-server, a FaaSCache host): on a free loopback port,
/// probed until it answers, started again on another port when the chosen one was taken in between, and always
/// disposed (process tree killed, folders deleted) when it does not come up. Errors carry the server's own output.
/// </summary>
internal static class ServerStarter
{
    private const int MaxPortAttempts = 5;
    private static readonly TimeSpan ProbePause = TimeSpan.FromMilliseconds(100);

    /// <summary>How to run one kind of server.</summary>
    /// <typeparam name="T">The server's handle.</typeparam>
    /// <param name="Name">What to call it in errors ("Azurite").</param>
    /// <param name="Launch">Starts the process on a port; throws (naming what to install) when it cannot be started.</param>
    /// <param name="Probe">One readiness probe: true once it answers a real request.</param>
    /// <param name="HasExited">Whether the process is gone.</param>
    /// <param name="Output">What it printed, for errors.</param>
    /// <param name="ExitCode">Its exit code once it exited.</param>
    /// <param name="PortTakenMarkers">Texts of its output that say the port was taken (then another port is tried).</param>
    public sealed record Recipe<T>(
        string Name,
        Func<int, T> Launch,
        Func<T, CancellationToken, Task<bool>> Probe,
        Func<T, bool> HasExited,
        Func<T, string> Output,
        Func<T, int?> ExitCode,
        IReadOnlyList<string> PortTakenMarkers)
        where T : IAsyncDisposable;

    /// <summary>Starts a server by <paramref name="recipe"/> and waits at most <paramref name="timeout"/> for it to answer.</summary>
    public static async Task<T> StartAsync<T>(Recipe<T> recipe, TimeSpan timeout, CancellationToken cancellationToken)
        where T : IAsyncDisposable
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        var earlierAttempts = new StringBuilder();
        for (int attempt = 1; ; attempt++)
        {
            int port = FreePorts.Get();
            T server = recipe.Launch(port);
            bool ready;
            try
            {
                ready = await WaitAsync(recipe, server, deadline.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                string output = recipe.Output(server);
                await server.DisposeAsync();
                throw new TimeoutException(
                    $"{recipe.Name} did not answer on 127.0.0.1:{port} within {timeout.TotalSeconds:0} s.{Environment.NewLine}" +
                    $"{recipe.Name} output:{Environment.NewLine}{output}{earlierAttempts}");
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }

            if (ready)
            {
                return server;
            }

            int? code = recipe.ExitCode(server);
            string exitOutput = recipe.Output(server);
            await server.DisposeAsync();
            if (recipe.PortTakenMarkers.Any(m => exitOutput.Contains(m, StringComparison.OrdinalIgnoreCase)) && attempt < MaxPortAttempts)
            {
                earlierAttempts.AppendLine().Append("(attempt ").Append(attempt).Append(": port ").Append(port).Append(" was taken)");
                continue;
            }

            throw new InvalidOperationException(
                $"{recipe.Name} exited with code {code} before it answered on 127.0.0.1:{port}.{Environment.NewLine}" +
                $"{recipe.Name} output:{Environment.NewLine}{exitOutput}{earlierAttempts}");
        }
    }

    /// <summary>True once the server answers; false when its process exited first.</summary>
    private static async Task<bool> WaitAsync<T>(Recipe<T> recipe, T server, CancellationToken cancellationToken)
        where T : IAsyncDisposable
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (recipe.HasExited(server))
            {
                return false;
            }

            if (await recipe.Probe(server, cancellationToken))
            {
                return true;
            }

            await Task.Delay(ProbePause, cancellationToken);
        }
    }
}
