using System.Buffers.Binary;
using System.IO.Hashing;
using System.Net.Sockets;
using System.Security.Cryptography;

namespace FaaSCache.Peers;

/// <summary>
/// One body a get's caller may fetch over the bulk connection (<see cref="PeerBulkServer"/>): the bytes (a slice of the
/// owner's map), optionally a wait for bytes still being downloaded (a pipelined remote miss) and a step before the
/// checksum (the owner has the whole object), and the ticket that claims it once.
/// </summary>
internal sealed class PeerBulkOffer
{
    /// <summary>Bytes per send: hashed just before they go, so they are still in the core's cache.</summary>
    public const int SliceSize = 1 << 20;

    private readonly ReadOnlyMemory<byte> _content;
    private readonly Func<long, CancellationToken, ValueTask<long>>? _waitFor;
    private readonly Func<Task>? _beforeTrailer;
    private readonly CancellationToken _callAborted;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public PeerBulkOffer(ReadOnlyMemory<byte> content, Func<long, CancellationToken, ValueTask<long>>? waitFor, Func<Task>? beforeTrailer, CancellationToken callAborted)
    {
        _content = content;
        _waitFor = waitFor;
        _beforeTrailer = beforeTrailer;
        _callAborted = callAborted;
        Span<byte> ticket = stackalloc byte[16];
        RandomNumberGenerator.Fill(ticket);
        TicketBytes = ticket.ToArray();
        Ticket = BinaryPrimitives.ReadUInt128LittleEndian(ticket);
    }

    /// <summary>Gets the ticket (random, 128 bits).</summary>
    public UInt128 Ticket { get; }

    /// <summary>Gets the ticket as it goes on the wire (little-endian).</summary>
    public byte[] TicketBytes { get; }

    /// <summary>Gets a task that completes when the body and its checksum were sent; faults or is cancelled otherwise.</summary>
    public Task Completion => _done.Task;

    /// <summary>Nobody will claim it (withdrawn, or the server stops).</summary>
    public void Abandon() => _done.TrySetCanceled();

    /// <summary>Sends OK, the bytes (waiting for those still arriving), then their XxHash3; ends <see cref="Completion"/>.</summary>
    public async Task SendAsync(Socket connection, Func<long, ReadOnlyMemory<byte>, CancellationToken, ValueTask<ReadOnlyMemory<byte>>>? tamper, CancellationToken stopping)
    {
        using var aborted = CancellationTokenSource.CreateLinkedTokenSource(_callAborted, stopping);
        CancellationToken cancellationToken = aborted.Token;
        try
        {
            await connection.SendAsync(new[] { PeerBulkServer.StatusOk }, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            var hash = new XxHash3();
            long total = _content.Length;
            long sent = 0;
            while (sent < total)
            {
                // A download in progress: wait for a quarter slice at least (or the end), as the gRPC path does.
                long available = _waitFor is null ? total : await _waitFor(Math.Min(sent + (SliceSize / 4), total) - 1, cancellationToken).ConfigureAwait(false);
                while (sent < available)
                {
                    ReadOnlyMemory<byte> slice = _content.Slice((int)sent, (int)Math.Min(SliceSize, available - sent));
                    hash.Append(slice.Span);
                    ReadOnlyMemory<byte> wire = tamper is null ? slice : await tamper(sent, slice, cancellationToken).ConfigureAwait(false);
                    await PeerBulkServer.SendAllAsync(connection, wire, cancellationToken).ConfigureAwait(false);
                    sent += slice.Length;
                }
            }

            if (_beforeTrailer is not null)
            {
                await _beforeTrailer().ConfigureAwait(false);
            }

            byte[] trailer = new byte[sizeof(ulong)];
            BinaryPrimitives.WriteUInt64LittleEndian(trailer, hash.GetCurrentHashAsUInt64());
            await PeerBulkServer.SendAllAsync(connection, trailer, cancellationToken).ConfigureAwait(false);
            _done.TrySetResult();
        }
        catch (Exception e)
        {
            _done.TrySetException(e);
            throw;
        }
    }
}
