using System.Threading.Channels;
using GrpcException = Grpc.Core.RpcException;

namespace FaaSCache.Host.Workers;

/// <summary>
/// The host's half of one worker's EventStream: who may claim it, and the queue of messages written to it in order by
/// one pump. Every phase of a <see cref="WorkerChannel"/> sends through it.
/// </summary>
internal sealed class WorkerStream
{
    private readonly Channel<Outbound> _outbound = Channel.CreateUnbounded<Outbound>(new UnboundedChannelOptions { SingleReader = true });
    private readonly WorkerPeer _peer;
    private readonly ILogger _logger;
    private int _claimed;
    private string _requestId = string.Empty;

    /// <summary>Initializes a new instance of the <see cref="WorkerStream"/> class.</summary>
    public WorkerStream(WorkerPeer peer, ILogger logger)
    {
        _peer = peer;
        _logger = logger;
    }

    /// <summary>Gets a value indicating whether the stream is attached.</summary>
    public bool IsConnected { get; private set; }

    /// <summary>Gets a value indicating whether a caller of <see cref="TryClaim"/> has the stream.</summary>
    public bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    /// <summary>Claims the stream atomically: true for the first caller only.</summary>
    public bool TryClaim() => Interlocked.CompareExchange(ref _claimed, 1, 0) == 0;

    /// <summary>Attaches the stream under <paramref name="requestId"/> and writes queued messages to it until <see cref="Close"/>.</summary>
    public Task OpenAsync(string requestId, IServerStreamWriter<StreamingMessage> output, CancellationToken cancellationToken)
    {
        _requestId = requestId;
        IsConnected = true;
        return PumpAsync(output, cancellationToken);
    }

    /// <summary>Detaches the stream: nothing more is queued.</summary>
    public void Close()
    {
        IsConnected = false;
        _outbound.Writer.TryComplete();
    }

    /// <summary>Queues a message; its writing is not awaited.</summary>
    public void Send(StreamingMessage message)
    {
        message.RequestId = _requestId;
        _outbound.Writer.TryWrite(new Outbound(message, null));
    }

    /// <summary>
    /// Queues a message and completes <paramref name="written"/> once it is on the wire or dropped; false when the stream
    /// takes no more messages (the message was not queued and <paramref name="written"/> is never completed).
    /// </summary>
    public bool TrySend(StreamingMessage message, TaskCompletionSource written)
    {
        message.RequestId = _requestId;
        return _outbound.Writer.TryWrite(new Outbound(message, written));
    }

    private async Task PumpAsync(IServerStreamWriter<StreamingMessage> output, CancellationToken cancellationToken)
    {
        try
        {
            await foreach (Outbound next in _outbound.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                try
                {
                    // Serialized into the stream before WriteAsync completes: after this the message holds no borrowed memory.
                    await output.WriteAsync(next.Message, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    next.Written?.TrySetResult();
                }
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or InvalidOperationException or GrpcException)
        {
            _logger.LogDebug(e, "Stream to worker {WorkerId} closed", _peer.WorkerId);
        }
        finally
        {
            // Nothing more is sent on this stream: refuse new messages and let go of those never written.
            _outbound.Writer.TryComplete();
            while (_outbound.Reader.TryRead(out Outbound left))
            {
                left.Written?.TrySetResult();
            }
        }
    }

    /// <summary>A message for the worker, and what to tell once it is written (or dropped).</summary>
    private readonly record struct Outbound(StreamingMessage Message, TaskCompletionSource? Written);
}
