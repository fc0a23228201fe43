using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using FaaSCache.Storage;

namespace FaaSCache.Peers;

/// <summary>
/// Whole-object gets in one round trip on a kept-open bulk connection (<see cref="PeerBulkServer"/>, request <c>G</c>):
/// no HTTP/2 stream, no gRPC call; the same key (a fresh token per request), the same checksum checked before the
/// consumer's last read returns. Used once a gRPC get's header has named the peer's bulk port.
/// </summary>
public sealed partial class GrpcPeerClient
{
    private const int MaxIdleBulkConnections = 8;

    private long _rawGets;

    /// <summary>Gets the number of gets served over a kept-open bulk connection (no gRPC call).</summary>
    internal long RawGets => Interlocked.Read(ref _rawGets);

    /// <summary>The get over the peer's bulk connection; not served (use gRPC) when its port is unknown or out of reach, or the peer says so.</summary>
    private async Task<RawGetOutcome<T>> TryRawGetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        PeerChannel peer = Channel(memberId);
        if (peer.BulkPort == 0 || !BulkReachable(peer))
        {
            return default;
        }

        try
        {
            return await RawGetAsync(peer, memberId, key, fetchIfMissing, consume, cancellationToken).ConfigureAwait(false);
        }
        catch (PeerUnavailableException e) when (e.InnerException is PeerBulkUnreachableException)
        {
            return default;
        }
    }

    private async Task<RawGetOutcome<T>> RawGetAsync<T>(PeerChannel peer, string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(fetchIfMissing ? _options.FetchTimeout : _options.CallTimeout);
        Socket? socket = null;
        bool keep = false;
        try
        {
            byte status;
            (socket, status) = await SendRawGetAsync(peer, key, fetchIfMissing, timeout).ConfigureAwait(false);
            switch (status)
            {
                case PeerBulkServer.StatusOk:
                    // After the status: hit (1 byte), version length (2), version, length (8).
                    byte[] head = new byte[3];
                    await ReceiveAsync(socket, head, timeout.Token).ConfigureAwait(false);
                    byte[] rest = new byte[BinaryPrimitives.ReadUInt16BigEndian(head.AsSpan(1)) + sizeof(long)];
                    await ReceiveAsync(socket, rest, timeout.Token).ConfigureAwait(false);
                    string version = Encoding.UTF8.GetString(rest, 0, rest.Length - sizeof(long));
                    long length = BinaryPrimitives.ReadInt64LittleEndian(rest.AsSpan(rest.Length - sizeof(long)));
                    if (length < 0 || version.Length == 0 || head[0] > 1)
                    {
                        throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer's bulk header does not fit a get (version '{version}', {length} bytes).");
                    }

                    T value = await ConsumeAsync(socket, length, version, consume, timeout, cancellationToken).ConfigureAwait(false);
                    keep = true;
                    Interlocked.Increment(ref _rawGets);
                    return new RawGetOutcome<T>(true, new PeerRangeResult<T>(version, 0, length, length, head[0] == 1, value));
                case PeerBulkServer.StatusNotCached:
                    keep = true;
                    return new RawGetOutcome<T>(true, null);
                case PeerBulkServer.StatusUseGrpc:
                    keep = true;
                    return default;
                case PeerBulkServer.StatusNotFound:
                    string missing = await ReceiveMessageAsync(socket, timeout.Token).ConfigureAwait(false);
                    keep = true;
                    throw new BlobNotFoundException($"Blob {key} does not exist (peer {memberId}: {missing})") { Key = key };
                case PeerBulkServer.StatusFailed:
                    string reason = await ReceiveMessageAsync(socket, timeout.Token).ConfigureAwait(false);
                    keep = true;
                    throw new PeerTransferException(PeerTransferFailure.Transport, $"the peer failed it: {reason}");
                case PeerBulkServer.StatusRefused:
                    throw new PeerTransferException(PeerTransferFailure.Refused, "the bulk connection's token was refused");
                default:
                    throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer answered a bulk get with status {status}.");
            }
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "get", e, timeout, cancellationToken);
        }
        finally
        {
            if (keep && socket is not null && peer.IdleBulk.Count < MaxIdleBulkConnections && _disposed == 0)
            {
                peer.IdleBulk.Enqueue(socket);
            }
            else
            {
                socket?.Dispose();
            }
        }
    }

    private async Task<T> ConsumeAsync<T>(Socket socket, long length, string version, PeerBodyConsumer<T> consume, CancellationTokenSource timeout, CancellationToken cancellationToken)
    {
        await using var body = new PeerBulkBodyStream(socket, length, null, timeout, _options.IdleTimeout, ownsSocket: false);
        return await body.ConsumeVerifiedAsync(length, version, consume, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Sends the request on an idle connection (once more on a new one if that was stale) and reads the status byte.</summary>
    private async Task<(Socket Socket, byte Status)> SendRawGetAsync(PeerChannel peer, string key, bool fetchIfMissing, CancellationTokenSource timeout)
    {
        byte[] keyBytes = Encoding.UTF8.GetBytes(key);
        byte[] request = PeerBulkBodyStream.Request(_key.CreateToken(PeerWire.BulkMethod, _time.GetUtcNow()), PeerBulkServer.KindGet, 3 + keyBytes.Length, out int at);
        request[at] = fetchIfMissing ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(at + 1), checked((ushort)keyBytes.Length));
        keyBytes.CopyTo(request, at + 3);
        byte[] status = new byte[1];
        while (true)
        {
            bool pooled = peer.IdleBulk.TryDequeue(out Socket? socket);
            socket ??= await ConnectBulkAsync(peer, timeout).ConfigureAwait(false);
            try
            {
                await PeerBulkBody.SendAllAsync(socket, request, timeout.Token).ConfigureAwait(false);
                await PeerBulkBody.ReceiveExactlyAsync(socket, status, timeout.Token).ConfigureAwait(false);
                return (socket, status[0]);
            }
            catch (Exception e) when (e is SocketException or IOException)
            {
                socket.Dispose();
                if (!pooled)
                {
                    throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk connection broke before the reply: {e.Message}", e);
                }

                // The owner closed that idle connection (it keeps them two minutes): try a new one.
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }
    }

    private async Task<Socket> ConnectBulkAsync(PeerChannel peer, CancellationTokenSource timeout)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var connect = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        connect.CancelAfter(_options.ConnectTimeout);
        try
        {
            await socket.ConnectAsync(peer.Endpoint.IdnHost, peer.BulkPort, connect.Token).ConfigureAwait(false);
            return socket;
        }
        catch (Exception e) when (e is SocketException || (e is OperationCanceledException && !timeout.IsCancellationRequested))
        {
            socket.Dispose();
            peer.BulkUnreachableUntil = _time.GetUtcNow() + BulkRetryAfter;
            throw new PeerBulkUnreachableException($"No bulk connection to {peer.Endpoint.IdnHost}:{peer.BulkPort}: {e.Message}", e);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static async ValueTask ReceiveAsync(Socket socket, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        try
        {
            await PeerBulkBody.ReceiveExactlyAsync(socket, buffer, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or IOException)
        {
            throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk connection broke in a reply: {e.Message}", e);
        }
    }

    private static async ValueTask<string> ReceiveMessageAsync(Socket socket, CancellationToken cancellationToken)
    {
        byte[] length = new byte[2];
        await ReceiveAsync(socket, length, cancellationToken).ConfigureAwait(false);
        byte[] text = new byte[BinaryPrimitives.ReadUInt16BigEndian(length)];
        await ReceiveAsync(socket, text, cancellationToken).ConfigureAwait(false);
        return Encoding.UTF8.GetString(text);
    }

    /// <summary>What a get over the bulk connection gave: served (with a result, or null when the peer does not hold it), or not (use gRPC).</summary>
    private readonly record struct RawGetOutcome<T>(bool Served, PeerRangeResult<T>? Result);
}
