namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>
/// The user-space link to a distant server: bytes pass unchanged both ways, and never sooner than its round trip nor
/// faster than its rate (lower bounds only: a loaded machine may be slower, never faster).
/// </summary>
[Trait("Category", "Unit")]
public sealed class DelayLinkTests
{
    [Fact]
    public async Task An_echo_through_the_link_comes_back_unchanged_and_no_sooner_than_its_round_trip()
    {
        using var echo = new EchoServer();
        await using var link = DelayLink.Start(echo.Endpoint, TimeSpan.FromMilliseconds(40));
        using var client = new TcpClient();
        await client.ConnectAsync(link.Endpoint);
        NetworkStream stream = client.GetStream();
        byte[] sent = [1, 2, 3, 4, 5];

        var clock = Stopwatch.StartNew();
        await stream.WriteAsync(sent);
        byte[] back = new byte[sent.Length];
        await stream.ReadExactlyAsync(back);

        Assert.Equal(sent, back);
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(39), $"the echo came back after {clock.Elapsed.TotalMilliseconds:0.0} ms, sooner than the link's 40 ms round trip");
    }

    [Fact]
    public async Task A_megabyte_through_a_10_MB_per_second_link_takes_at_least_a_tenth_of_a_second_and_arrives_whole()
    {
        using var echo = new EchoServer();
        await using var link = DelayLink.Start(echo.Endpoint, TimeSpan.Zero, bytesPerSecond: 10_000_000);
        using var client = new TcpClient();
        await client.ConnectAsync(link.Endpoint);
        NetworkStream stream = client.GetStream();
        byte[] sent = new byte[1_000_000];
        Random.Shared.NextBytes(sent);

        var clock = Stopwatch.StartNew();
        Task write = stream.WriteAsync(sent).AsTask();
        byte[] back = new byte[sent.Length];
        await stream.ReadExactlyAsync(back);
        await write;

        Assert.Equal(sent, back);
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(90), $"1 MB came back in {clock.Elapsed.TotalMilliseconds:0.0} ms, faster than 10 MB/s allows");
    }

    [Fact]
    public void A_negative_round_trip_or_rate_is_refused_naming_it()
    {
        var target = new IPEndPoint(IPAddress.Loopback, 9);
        Assert.Contains("round trip", Assert.Throws<ArgumentOutOfRangeException>(() => DelayLink.Start(target, TimeSpan.FromMilliseconds(-1))).Message, StringComparison.Ordinal);
        Assert.Contains("rate", Assert.Throws<ArgumentOutOfRangeException>(() => DelayLink.Start(target, TimeSpan.Zero, 0)).Message, StringComparison.Ordinal);
    }

    /// <summary>A TCP server on loopback that sends back what it receives.</summary>
    private sealed class EchoServer : IDisposable
    {
        private readonly TcpListener _listener = new(IPAddress.Loopback, 0);

        public EchoServer()
        {
            _listener.Start();
            _ = Task.Run(async () =>
            {
                try
                {
                    while (true)
                    {
                        Socket s = await _listener.AcceptSocketAsync();
                        _ = Task.Run(async () =>
                        {
                            using (s)
                            {
                                byte[] buffer = new byte[65536];
                                int n;
                                while ((n = await s.ReceiveAsync(buffer, SocketFlags.None)) > 0)
                                {
                                    await s.SendAsync(buffer.AsMemory(0, n), SocketFlags.None);
                                }
                            }
                        });
                    }
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                }
            });
        }

        public IPEndPoint Endpoint => (IPEndPoint)_listener.LocalEndpoint;

        public void Dispose() => _listener.Stop();
    }
}
