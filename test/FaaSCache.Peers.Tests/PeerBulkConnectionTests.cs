using System.Net.Sockets;

namespace FaaSCache.Peers.Tests;

/// <summary>
/// For the 1 KB remote hit's sake, a bulk connection's messages are read from one buffer (one receive for a whole
/// request or small reply, fields split across receives still read right), and the owner serves each kept-open
/// connection on a thread of its own that ends when the server stops.
/// </summary>
[Trait("Category", "Integration")]
public sealed class PeerBulkConnectionTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Fields_split_across_receives_and_longer_than_the_buffer_are_read_whole_and_the_rest_is_handed_on()
    {
        (Socket sender, Socket receiver) = await ConnectedPairAsync();
        using (sender)
        using (receiver)
        using (var reader = new PeerBulkReader(receiver, 16))
        {
            using var timeout = new CancellationTokenSource(Bound);
            byte[] message = Enumerable.Range(0, 100).Select(i => (byte)i).ToArray();
            Task sending = Task.Run(async () =>
            {
                // One byte per send: every field is split across receives.
                foreach (byte b in message)
                {
                    await sender.SendAsync(new[] { b }, SocketFlags.None, timeout.Token);
                }
            });

            Assert.Equal(message[..3], (await reader.ReadExactlyAsync(3, timeout.Token)).ToArray());
            Assert.Equal(message[3..67], (await reader.ReadExactlyAsync(64, timeout.Token)).ToArray());
            await sending;
            while (reader.Buffered < 33)
            {
                Assert.True(await reader.FillAsync(timeout.Token));
            }

            Assert.Equal(message[67..], reader.TakeBuffered().ToArray());
            Assert.Equal(0, reader.Buffered);
            sender.Shutdown(SocketShutdown.Send);
            EndOfStreamException ended = await Assert.ThrowsAsync<EndOfStreamException>(async () => await reader.ReadExactlyAsync(1, timeout.Token));
            Assert.Contains("1 bytes still expected", ended.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task Kept_open_connections_are_served_on_threads_of_their_own_which_end_when_the_server_stops()
    {
        PeerKey key = PeerKey.Derive("the app's storage secret", "bulk-threads");
        var server = new PeerBulkServer(Microsoft.Extensions.Options.Options.Create(new PeerServerOptions { Key = key }));
        var clients = new List<Socket>();
        try
        {
            int port = server.Listen(IPAddress.Loopback);
            for (int i = 0; i < 3; i++)
            {
                var client = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                clients.Add(client);
                await client.ConnectAsync(IPAddress.Loopback, port);
            }

            await WaitUntilAsync(() => server.OwnThreadConnections == 3, "3 connections on threads of their own");

            // A request sent in pieces (magic, then the token byte by byte, then the key) is served whole, and the
            // connection stays open for the next one (this server has no cachelet: each is answered "use gRPC").
            byte[] request = PeerBulkBodyStream.GetRequest(key.CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow), "container/blob", fetchIfMissing: false);
            using var timeout = new CancellationTokenSource(Bound);
            foreach (byte b in request)
            {
                await clients[0].SendAsync(new[] { b }, SocketFlags.None, timeout.Token);
            }

            byte[] reply = new byte[1];
            await PeerBulkBody.ReceiveExactlyAsync(clients[0], reply, timeout.Token);
            Assert.Equal(PeerBulkServer.StatusUseGrpc, reply[0]);
            await PeerBulkBody.SendAllAsync(clients[0], PeerBulkBodyStream.GetRequest(key.CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow), "container/blob", fetchIfMissing: false), timeout.Token);
            await PeerBulkBody.ReceiveExactlyAsync(clients[0], reply, timeout.Token);
            Assert.Equal(PeerBulkServer.StatusUseGrpc, reply[0]);

            // Stopping the server wakes every waiting thread: each connection is closed and its thread ends.
            await server.DisposeAsync();
            await WaitUntilAsync(() => server.OwnThreadConnections == 0, "no connection left on a thread");
            foreach (Socket client in clients)
            {
                Assert.Equal(0, await client.ReceiveAsync(new byte[1], SocketFlags.None, timeout.Token));
            }
        }
        finally
        {
            await server.DisposeAsync();
            clients.ForEach(c => c.Dispose());
        }
    }

    private static async Task<(Socket Sender, Socket Receiver)> ConnectedPairAsync()
    {
        using var listener = new Socket(SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var sender = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await sender.ConnectAsync(listener.LocalEndPoint!);
        return (sender, await listener.AcceptAsync());
    }

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        using var timeout = new CancellationTokenSource(Bound);
        while (!condition())
        {
            Assert.False(timeout.IsCancellationRequested, $"Not reached within {Bound.TotalSeconds} s: {what}.");
            await Task.Delay(20, CancellationToken.None);
        }
    }
}
