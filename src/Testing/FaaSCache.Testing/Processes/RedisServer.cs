namespace FaaSCache.Testing;

/// <summary>
/// A real redis-server on a free loopback port, without persistence, with its own temporary working
/// folder. Dispose kills it and deletes the folder.
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    public const string DefaultExecutable = "/usr/bin/redis-server";

    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private static readonly byte[] PingCommand = "*1\r\n$4\r\nPING\r\n"u8.ToArray();

    private readonly ChildProcess _process;
    private readonly OwnedDirectory _workingDirectory;
    private int _disposed;

    private RedisServer(ChildProcess process, OwnedDirectory workingDirectory, int port)
    {
        _process = process;
        _workingDirectory = workingDirectory;
        Port = port;
        Endpoint = $"127.0.0.1:{port}";
    }

    public int Port { get; }

    /// <summary>"127.0.0.1:PORT" (a StackExchange.Redis configuration string).</summary>
    public string Endpoint { get; }

    public int ProcessId => _process.Id;

    /// <summary>redis-server's --dir (deleted on dispose).</summary>
    public string WorkingDirectory => _workingDirectory.Path;

    /// <summary>Starts redis-server and waits (at most <see cref="StartTimeout"/>) until it answers PING.</summary>
    public static async Task<RedisServer> StartAsync(CancellationToken cancellationToken = default)
    {
        var executable = FindExecutable() ?? throw new InvalidOperationException(
            $"redis-server is not installed (looked for {DefaultExecutable} and on PATH). Run the repository setup " +
            "script (scripts/setup.sh) or `sudo apt-get install redis-server`.");

        var recipe = new ServerStarter.Recipe<RedisServer>(
            "redis-server",
            port =>
            {
                var directory = new OwnedDirectory(Path.GetTempPath(), "faascache-redis");
                try
                {
                    ChildProcess child = ChildProcess.Start(
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
                    return new RedisServer(child, directory, port);
                }
                catch (Win32Exception e)
                {
                    directory.Dispose();
                    throw new InvalidOperationException(
                        $"Could not start '{executable}'. Run the repository setup script (scripts/setup.sh) or `sudo apt-get install redis-server`.", e);
                }
            },
            (server, token) => TryPingAsync(server.Port, TimeSpan.FromSeconds(1), token),
            server => server._process.HasExited,
            server => server._process.CapturedOutput,
            server => server._process.ExitCode,
            ["Address already in use"]);
        return await ServerStarter.StartAsync(recipe, StartTimeout, cancellationToken);
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
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await _process.DisposeAsync();
        }
        finally
        {
            _workingDirectory.Dispose();
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
}
