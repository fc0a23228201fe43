namespace FaaSCache.Benchmarks;

/// <summary>Sends requests without waiting for them (open loop, bounded in flight) and collects, per second, the latencies of those answered and the failures.</summary>
internal sealed class LoadRecorder
{
    private readonly Lock _gate = new();
    private readonly List<Task> _inFlight = [];
    private List<double> _latencies = [];
    private int _failed;
    private int _sent;

    public int Sent => Volatile.Read(ref _sent);

    /// <summary>Sends one GET; counts it as failed at once when <paramref name="maxInFlight"/> are already out (the bound of the load).</summary>
    public void Send(HttpClient http, Uri uri, int maxInFlight)
    {
        Interlocked.Increment(ref _sent);
        lock (_gate)
        {
            _inFlight.RemoveAll(t => t.IsCompleted);
            if (_inFlight.Count >= maxInFlight)
            {
                _failed++;
                return;
            }

            _inFlight.Add(OneAsync(http, uri));
        }
    }

    /// <summary>Takes what was answered since the last call.</summary>
    public (List<double> Latencies, int Failed) TakeSecond()
    {
        lock (_gate)
        {
            (List<double> latencies, int failed) = (_latencies, _failed);
            _latencies = [];
            _failed = 0;
            return (latencies, failed);
        }
    }

    /// <summary>Waits for every request still out.</summary>
    public async Task DrainAsync()
    {
        Task[] all;
        lock (_gate)
        {
            all = [.. _inFlight];
        }

        await Task.WhenAll(all);
    }

    private async Task OneAsync(HttpClient http, Uri uri)
    {
        long start = Stopwatch.GetTimestamp();
        bool ok;
        try
        {
            using HttpResponseMessage response = await http.GetAsync(uri);
            ok = response.IsSuccessStatusCode;
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            ok = false;
        }

        double ms = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        lock (_gate)
        {
            if (ok)
            {
                _latencies.Add(ms);
            }
            else
            {
                _failed++;
            }
        }
    }
}
