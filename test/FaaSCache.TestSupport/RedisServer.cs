using System.ComponentModel;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace FaaSCache.TestSupport;

/// <summary>
/// A real redis-server on a free loopback port, without persistence, with its own temporary working
/// folder. Dispose kills it and deletes the folder.
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    public const string DefaultExecutable = "/usr/bin/redis-server";

    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private const int MaxPortAttempts = 5;
    private static readonly byte[] PingCommand = "*1\r\n$4\r\nPING\r\n"u8.ToArray();

    private readonly ChildProcess process;
    private readonly OwnedDirectory workingDirectory;
    private int disposed;

    private RedisServer(ChildProcess process, OwnedDirectory workingDirectory, int port)
    {
        this.process = process;
        this.workingDirectory = workingDirectory;
        Port = port;
        Endpoint = $"127.0.0.1:{port}";
    }

    public int Port { get; }

    /// <summary>"127.0.0.1:PORT" (a StackExchange.Redis configuration string).</summary>
    public string Endpoint { get; }

    public int ProcessId => process.Id;

    /// <summary>redis-server's --dir (deleted on dispose).</summary>
    public string WorkingDirectory => workingDirectory.Path;

    /// <summary>Starts redis-server and waits (at most <see cref="StartTimeout"/>) until it answers PING.</summary>
    public static async Task<RedisServer> StartAsync(CancellationToken cancellationToken = default)
    {
        var executable = FindExecutable() ?? throw new InvalidOperationException(
            $"redis-server is not installed (looked for {DefaultExecutable} and on PATH). Run the repository setup " +
            "script (scripts/setup.sh) or `sudo apt-get install redis-server`.");

        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(StartTimeout);
        var earlierAttempts = new StringBuilder();

        for (var attempt = 1; ; attempt++)
        {
            var port = TcpPorts.GetFreePort();
            var directory = new OwnedDirectory(Path.GetTempPath(), "faascache-redis");
            ChildProcess child;
            try
            {
                child = ChildProcess.Start(
                    executable,
                    [
                        "--port", port.ToString(CultureInfo.InvariantCulture),
                        "--bind", "127.0.0.1",
                        "--save", string.Empty,
                        "--appendonly", "no",
                        "--daemonize", "no",
                        "--dir", directory.Path,
                    ],
                    directory.Path);
            }
            catch (Win32Exception e)
            {
                directory.Dispose();
                throw new InvalidOperationException(
                    $"Could not start '{executable}'. Run the repository setup script (scripts/setup.sh) or `sudo apt-get install redis-server`.", e);
            }

            var server = new RedisServer(child, directory, port);
            bool ready;
            try
            {
                ready = await server.WaitUntilReadyAsync(deadline.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                var output = child.CapturedOutput;
                await server.DisposeAsync();
                throw new TimeoutException(
                    $"redis-server did not answer PING on {server.Endpoint} within {StartTimeout.TotalSeconds:0} s." +
                    $"{Environment.NewLine}redis-server output:{Environment.NewLine}{output}{earlierAttempts}");
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

            var exitCode = child.ExitCode;
            var exitOutput = child.CapturedOutput;
            await server.DisposeAsync();
            if (exitOutput.Contains("Address already in use", StringComparison.OrdinalIgnoreCase) && attempt < MaxPortAttempts)
            {
                earlierAttempts.AppendLine().Append("(attempt ").Append(attempt).Append(": port ").Append(port).Append(" was taken)");
                continue;
            }

            throw new InvalidOperationException(
                $"redis-server exited with code {exitCode} before it answered PING on {server.Endpoint}." +
                $"{Environment.NewLine}redis-server output:{Environment.NewLine}{exitOutput}{earlierAttempts}");
        }
    }

    /// <summary>Sends PING over a raw socket (RESP) and returns true on +PONG.</summary>
    public static async Task<bool> TryPingAsync(int port, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        cts.CancelAfter(timeout);
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, port, cts.Token);
            var stream = client.GetStream();
            await stream.WriteAsync(PingCommand, cts.Token);
            var reply = new StringBuilder();
            var buffer = new byte[64];
            while (!reply.ToString().EndsWith("\r\n", StringComparison.Ordinal))
            {
                var read = await stream.ReadAsync(buffer, cts.Token);
                if (read == 0)
                {
                    return false;
                }

                reply.Append(Encoding.ASCII.GetString(buffer, 0, read));
            }

            return reply.ToString() == "+PONG\r\n";
        }
        catch (Exception e) when (e is SocketException or IOException ||
                                  (e is OperationCanceledException && !cancellationToken.IsCancellationRequested))
        {
            return false;
        }
    }

    /// <summary>Kills redis-server, waits for it to exit and deletes its working folder.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await process.DisposeAsync();
        }
        finally
        {
            workingDirectory.Dispose();
        }
    }

    private static string? FindExecutable()
    {
        if (File.Exists(DefaultExecutable))
        {
            return DefaultExecutable;
        }

        var path = Environment.GetEnvironmentVariable("PATH") ?? string.Empty;
        return path.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(dir => Path.Combine(dir, "redis-server"))
            .FirstOrDefault(File.Exists);
    }

    private async Task<bool> WaitUntilReadyAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (process.HasExited)
            {
                return false;
            }

            if (await TryPingAsync(Port, TimeSpan.FromSeconds(1), cancellationToken))
            {
                return true;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(50), cancellationToken);
        }
    }
}
