using System.Threading.Channels;
using Grpc.AspNetCore.Server;
using Grpc.Core.Interceptors;
using Microsoft.AspNetCore.Builder;

namespace FaaSCache.Peers.Tests;

/// <summary>
/// One cachelet and its peer service in a process of its own (<c>dotnet FaaSCache.Peers.Tests.dll serve-peer ...</c>),
/// so a test can kill it with SIGKILL in the middle of a transfer. After <c>--slow-after</c> bytes of a get it prints
/// <c>HALFWAY</c> and sends the rest slowly (gRPC chunks or bulk slices alike), so the kill lands mid-stream. It exits
/// when its stdin closes.
/// </summary>
internal static class PeerServerProcess
{
    public const string Command = "serve-peer";
    public const string ListeningLine = "LISTENING";
    public const string HalfwayLine = "HALFWAY";

    public static async Task<int> RunAsync(string[] args)
    {
        Dictionary<string, string> a = Arguments(args);
        string id = a["--id"];
        string connection = a["--connection"];
        int port = int.Parse(a["--port"], CultureInfo.InvariantCulture);
        long slowAfter = long.Parse(a.GetValueOrDefault("--slow-after", "-1"), CultureInfo.InvariantCulture);
        var options = new FaaSCacheOptions { Consistency = ConsistencyPreset.OwnerLocalRead, CapacityBytes = 512L << 20 };
        await using Cachelet cachelet = new CacheletBuilder(id, [a["--shm"]])
            .WithOptions(options)
            .WithStorage(AzureBlobStore.FromConnectionString(connection))
            .WithOwners(new RingOwnerLocator(id, a["--members"].Split(',')))
            .Build();
        if (a.TryGetValue("--preload", out string? preload))
        {
            (await cachelet.ReadAsync(preload)).Dispose();
        }

        var pacing = new PacingInterceptor(slowAfter, TimeSpan.FromMilliseconds(500));
        await using var web = PeerServer.Build(
            cachelet,
            PeerKey.FromConnectionString(connection, a["--app"]),
            port,
            services =>
            {
                services.AddSingleton(pacing);
                services.AddGrpc().AddServiceOptions<CacheletPeerService>(o => o.Interceptors.Add<PacingInterceptor>());
            },
            configure: null);
        web.Services.GetRequiredService<PeerBulkServer>().Tamper = pacing.PaceBulkAsync;
        await web.StartAsync();
        Console.WriteLine($"{ListeningLine} {port}");
        await Task.Run(() => Console.In.ReadToEnd());
        await web.StopAsync();
        return 0;
    }

    /// <summary>Starts the process and waits until it listens.</summary>
    public static async Task<Handle> StartAsync(string id, string[] members, string shm, string connection, string app, string? preload, long slowAfter)
    {
        int port = FreePorts.Get();
        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host) ? host : "dotnet";
        var start = new ProcessStartInfo(dotnet)
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (string arg in new[]
        {
            typeof(PeerServerProcess).Assembly.Location, Command, "--id", id, "--members", string.Join(',', members), "--shm", shm,
            "--connection", connection, "--app", app, "--port", port.ToString(CultureInfo.InvariantCulture), "--slow-after", slowAfter.ToString(CultureInfo.InvariantCulture),
        })
        {
            start.ArgumentList.Add(arg);
        }

        if (preload is not null)
        {
            start.ArgumentList.Add("--preload");
            start.ArgumentList.Add(preload);
        }

        var handle = new Handle(Process.Start(start)!, port);
        try
        {
            await handle.WaitForLineAsync(ListeningLine, TimeSpan.FromSeconds(60));
        }
        catch
        {
            await handle.DisposeAsync();
            throw;
        }

        return handle;
    }

    private static Dictionary<string, string> Arguments(string[] args)
    {
        var result = new Dictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i + 1 < args.Length; i += 2)
        {
            result[args[i]] = args[i + 1];
        }

        return result;
    }

    /// <summary>The running process: its lines of output, and kill.</summary>
    internal sealed class Handle : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
        private readonly System.Text.StringBuilder _stderr = new();
        private readonly EventHandler _onExit;

        public Handle(Process process, int port)
        {
            _process = process;
            Port = port;
            // If the test process ends first: kill it (and it exits by itself anyway when its stdin closes).
            _onExit = (_, _) => ProcessTree.Kill(process);
            AppDomain.CurrentDomain.ProcessExit += _onExit;
            process.OutputDataReceived += (_, e) =>
            {
                if (e.Data is not null)
                {
                    _lines.Writer.TryWrite(e.Data);
                }
            };
            process.ErrorDataReceived += (_, e) =>
            {
                lock (_stderr)
                {
                    _stderr.AppendLine(e.Data);
                }
            };
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
        }

        public int Port { get; }

        public int Id => _process.Id;

        public Uri Endpoint => new($"http://127.0.0.1:{Port}/");

        public bool HasExited => _process.HasExited;

        public async Task<string> WaitForLineAsync(string prefix, TimeSpan timeout)
        {
            using var cts = new CancellationTokenSource(timeout);
            try
            {
                while (true)
                {
                    string line = await _lines.Reader.ReadAsync(cts.Token);
                    if (line.StartsWith(prefix, StringComparison.Ordinal))
                    {
                        return line;
                    }
                }
            }
            catch (OperationCanceledException)
            {
                string stderr;
                lock (_stderr)
                {
                    stderr = _stderr.ToString();
                }

                throw new TimeoutException($"Peer process {_process.Id} did not print '{prefix}' within {timeout} (exited: {_process.HasExited}). stderr:{Environment.NewLine}{stderr}");
            }
        }

        /// <summary>SIGKILL: no shutdown, no goodbye on the connection.</summary>
        public Task KillAsync() => ProcessTree.KillAsync(_process, TimeSpan.FromSeconds(15));

        public async ValueTask DisposeAsync()
        {
            await KillAsync();
            AppDomain.CurrentDomain.ProcessExit -= _onExit;
            _process.Dispose();
        }
    }

    /// <summary>After <c>slowAfter</c> bytes of a get, announces HALFWAY on stdout and then sends one chunk per <c>delay</c>.</summary>
    private sealed class PacingInterceptor(long slowAfter, TimeSpan delay) : Interceptor
    {
        private int _bulkAnnounced;

        /// <summary>The same pacing for a body sent over the bulk connection, slice by slice.</summary>
        public async ValueTask<ReadOnlyMemory<byte>> PaceBulkAsync(long offset, ReadOnlyMemory<byte> slice, CancellationToken cancellationToken)
        {
            if (slowAfter >= 0 && offset >= slowAfter)
            {
                if (Interlocked.Exchange(ref _bulkAnnounced, 1) == 0)
                {
                    Console.WriteLine($"{HalfwayLine} {offset}");
                }

                await Task.Delay(delay, cancellationToken);
            }

            return slice;
        }

        public override Task ServerStreamingServerHandler<TRequest, TResponse>(TRequest request, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, ServerStreamingServerMethod<TRequest, TResponse> continuation)
            => slowAfter < 0 ? continuation(request, responseStream, context) : continuation(request, new Writer<TResponse>(responseStream, slowAfter, delay), context);

        private sealed class Writer<T>(IServerStreamWriter<T> inner, long slowAfter, TimeSpan delay) : IServerStreamWriter<T>
        {
            private long _sent;
            private bool _announced;

            public WriteOptions? WriteOptions
            {
                get => inner.WriteOptions;
                set => inner.WriteOptions = value;
            }

            public Task WriteAsync(T message) => WriteAsync(message, CancellationToken.None);

            public async Task WriteAsync(T message, CancellationToken cancellationToken)
            {
                if (message is GetReply { PartCase: GetReply.PartOneofCase.Chunk } reply)
                {
                    if (_sent >= slowAfter)
                    {
                        if (!_announced)
                        {
                            _announced = true;
                            Console.WriteLine($"{HalfwayLine} {_sent}");
                        }

                        await Task.Delay(delay, cancellationToken);
                    }

                    _sent += reply.Chunk.Length;
                }

                await inner.WriteAsync(message, cancellationToken);
            }
        }
    }
}
