namespace FaaSCache.Peers;

/// <summary>Why a streamed body failed (the receiver deletes what it wrote and exposes nothing).</summary>
internal enum PeerTransferFailure
{
    /// <summary>The connection or the call broke, or the sender stopped sending.</summary>
    Transport,

    /// <summary>The checksum of the bytes received does not match the sender's.</summary>
    Corrupted,

    /// <summary>The sender broke the message order or sizes of <c>Peer.proto</c>.</summary>
    Protocol,

    /// <summary>The sender refused our token (on the bulk connection).</summary>
    Refused,
}

/// <summary>A streamed body could not be received intact; thrown by the body streams so the consumer discards its copy.</summary>
internal sealed class PeerTransferException : IOException
{
    public PeerTransferException()
    {
    }

    public PeerTransferException(string message)
        : base(message)
    {
    }

    public PeerTransferException(string message, Exception inner)
        : base(message, inner)
    {
    }

    public PeerTransferException(PeerTransferFailure failure, string message, Exception? inner = null)
        : base(message, inner)
    {
        Failure = failure;
    }

    public PeerTransferFailure Failure { get; }
}
