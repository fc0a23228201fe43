namespace FaaSCache.Peers;

/// <summary>
/// Kept-open bulk connections served each on a thread of its own, as a small server like Redis serves them: the thread
/// waits for the next request in poll(2) on the socket, so the kernel wakes it directly when the request arrives, and a
/// cached object's reply is read, checked and sent on that thread (each socket call then completes at once). Awaiting
/// the request instead costs a hand-off from the socket engine's thread to the thread pool on every request, and the
/// pool's workers spin while they wait: about a third of a 1 KB remote hit's time here. Work that must wait (a miss the
/// owner downloads, a large body the socket cannot take at once) goes on asynchronously while this thread waits for it.
/// </summary>
public sealed partial class PeerBulkServer
{
    /// <summary>Connections served on threads of their own at most; more are served asynchronously.</summary>
    internal const int MaxOwnThreads = 64;

    /// <summary>How often a thread waiting for a request looks at whether the server is stopping.</summary>
    private static readonly TimeSpan PollSlice = TimeSpan.FromSeconds(1);

    private readonly ConcurrentDictionary<Socket, byte> _threadConnections = new();

    /// <summary>Gets the number of connections now served on threads of their own.</summary>
    internal int OwnThreadConnections => _threadConnections.Count;

    private bool TryServeOnOwnThread(Socket connection, CancellationToken stopping)
    {
        if (_threadConnections.Count >= MaxOwnThreads || !_threadConnections.TryAdd(connection, 0))
        {
            return false;
        }

        var thread = new Thread(() => ServeOnOwnThread(connection, stopping))
        {
            IsBackground = true,
            Name = "FaaSCache bulk peer",
        };
        try
        {
            thread.Start();
            return true;
        }
        catch (OutOfMemoryException)
        {
            _threadConnections.TryRemove(connection, out _);
            return false;
        }
    }

    private void ServeOnOwnThread(Socket connection, CancellationToken stopping)
    {
        using var reader = new PeerBulkReader(connection, RequestBufferSize);
        try
        {
            connection.NoDelay = true;
            while ((reader.Buffered > 0 || WaitForRequest(connection, stopping)) && ServeRequestAsync(connection, reader, stopping).GetAwaiter().GetResult())
            {
            }
        }
        catch (Exception e) when (IsConnectionEnd(e))
        {
            _logger.LogDebug(e, "A bulk connection from {Peer} ended", SafeRemote(connection));
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "A bulk connection from {Peer} failed", SafeRemote(connection));
        }
        finally
        {
            _threadConnections.TryRemove(connection, out _);
            connection.Dispose();
        }
    }

    /// <summary>True when a request (or the caller's close) is there to read; false when idle too long or stopping.</summary>
    private static bool WaitForRequest(Socket connection, CancellationToken stopping)
    {
        for (TimeSpan waited = TimeSpan.Zero; waited < IdleTimeout && !stopping.IsCancellationRequested; waited += PollSlice)
        {
            if (connection.Poll(PollSlice, SelectMode.SelectRead))
            {
                return !stopping.IsCancellationRequested;
            }
        }

        return false;
    }

    /// <summary>Wakes every thread waiting on a connection (shutdown ends its poll) so that it ends.</summary>
    private void StopOwnThreads()
    {
        foreach (Socket connection in _threadConnections.Keys)
        {
            try
            {
                connection.Shutdown(SocketShutdown.Both);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Already closed by its thread.
            }
        }
    }
}
