using System.Net;
using System.Net.Sockets;
using FaaSCache.Caching;
using FaaSCache.Cluster;
using FaaSCache.Peers.Protocol;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Peers;

/// <summary>§3.2, large whole-object gets over the bulk connection (<see cref="PeerBulkServer"/>) instead of gRPC chunks.</summary>
public sealed partial class CacheletPeerService
{
    /// <summary>Whether a body of <paramref name="length"/> goes over the bulk connection (with a ticket) rather than in gRPC chunks.</summary>
    private static bool OffersBulkBody(GetRequest request, long length) => request.Range is null && length >= PeerWire.BulkThreshold && length <= int.MaxValue;

    /// <summary>
    /// The bulk port of this call's local address when the caller can use it (its header tells the caller, who sends later
    /// whole gets there directly), or null: no listener, or not asked for.
    /// </summary>
    private int? BulkPort(GetRequest request, ServerCallContext context)
    {
        if (_bulk is null || !request.Bulk)
        {
            return null;
        }

        IPAddress local = context.GetHttpContext().Connection.LocalIpAddress ?? IPAddress.Loopback;
        try
        {
            return _bulk.Listen(local);
        }
        catch (SocketException e)
        {
            _logger.LogWarning("No bulk listener on {Address} ({Reason}): large gets go over gRPC", local, e.Message);
            return null;
        }
    }

    /// <summary>
    /// Answers the header with a ticket and waits until the caller has fetched the body with it over the bulk
    /// connection (or the call ends); the bytes stay valid until then, since the caller of this method holds their lease.
    /// </summary>
    private async Task SendBulkAsync(string key, int port, GetHeader header, ReadOnlyMemory<byte> content, Func<long, CancellationToken, ValueTask<long>>? waitFor, Func<Task>? beforeTrailer, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken, string? filePath = null)
    {
        PeerBulkOffer offer = _bulk!.Offer(content, waitFor, beforeTrailer, cancellationToken, filePath);
        try
        {
            header.BulkPort = port;
            header.BulkTicket = UnsafeByteOperations.UnsafeWrap(offer.TicketBytes);
            await responseStream.WriteAsync(new GetReply { Header = header }, cancellationToken).ConfigureAwait(false);
            await offer.Completion.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException)
        {
            _logger.LogWarning("The bulk transfer of {Key} broke: {Reason}", key, e.Message);
            throw new RpcException(new Status(StatusCode.Unavailable, $"The owner's bulk transfer of {key} broke: {e.Message}"));
        }
        finally
        {
            if (!_bulk.Withdraw(offer))
            {
                // A transfer took the offer: it reads the owner's map until it ends (soon, once the call is gone).
                await offer.Completion.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
            }
        }
    }

    /// <summary>A remote miss over the bulk connection: bytes go as the owner's download fills its map, the checksum once it is whole.</summary>
    private async Task SendWhileFillingBulkAsync(string key, int port, FillProgress progress, Task<ObjectLease> completion, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        ObjectLease? lease = null;
        bool completionTaken = false;
        try
        {
            var header = new GetHeader { Found = true, Version = progress.Version, TotalLength = progress.Length, Offset = 0, Length = progress.Length, Hit = false };
            await SendBulkAsync(
                key,
                port,
                header,
                progress.Content,
                progress.WaitAsync,
                async () =>
                {
                    completionTaken = true;
                    lease = await completion.ConfigureAwait(false);
                },
                responseStream,
                cancellationToken,
                progress.FilePath).ConfigureAwait(false);
        }
        finally
        {
            lease?.Dispose();
            progress.ReaderDone();
            if (!completionTaken)
            {
                // The read goes on without us: release its lease (or observe its failure) when it ends.
                _ = completion.ContinueWith(static t => { if (t.IsCompletedSuccessfully) { t.Result.Dispose(); } else { _ = t.Exception; } }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
    }
}
