namespace FaaSCache.Benchmarks;

/// <summary>One FaaSCache host process serving one bench app, with its own shared-memory root and HTTP client.</summary>
internal sealed class BenchHost(string language, bool cache, FaaSCacheHostProcess process, TempShmDirectory shm) : IAsyncDisposable
{
    private int _stopped;

    public string Language { get; } = language;

    public bool Cache { get; } = cache;

    public FaaSCacheHostProcess Process { get; } = process;

    public TempShmDirectory Shm { get; } = shm;

    /// <summary>
    /// Gets the benchmark's client: one kept-alive HTTP/1.1 connection pool per host, no proxy, no
    /// automatic decompression; what a load generator next to the host would use.
    /// </summary>
    public HttpClient Client { get; } = new(new SocketsHttpHandler
    {
        UseProxy = false,
        AutomaticDecompression = DecompressionMethods.None,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(30),
        PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
    })
    {
        BaseAddress = process.BaseUri,
        Timeout = TimeSpan.FromMinutes(5),
    };

    public string Label => $"{Language} --cache {(Cache ? "on" : "off")}";

    /// <summary>Stops the host with SIGTERM (workers ended, maps removed); returns its exit code and how many maps it left.</summary>
    public async Task<(int ExitCode, int MapsLeft)> StopAsync()
    {
        Interlocked.Exchange(ref _stopped, 1);
        int code = await Process.StopAsync();
        string maps = Path.Combine(Shm.Path, "AzureFunctions");
        int left = Directory.Exists(maps) ? Directory.EnumerateFiles(maps).Count() : 0;
        return (code, left);
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        try
        {
            if (Volatile.Read(ref _stopped) == 0 && !Process.HasExited)
            {
                // A clean stop first, so the host removes its own maps; dispose kills whatever is left.
                await Process.StopAsync(TimeSpan.FromSeconds(20));
            }
        }
        catch (Exception e) when (e is TimeoutException or InvalidOperationException)
        {
            // Killed below.
        }
        finally
        {
            await Process.DisposeAsync();
            Shm.Dispose();
        }
    }
}
