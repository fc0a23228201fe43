using System.Buffers.Binary;
using System.Net.Sockets;
using System.Security.Cryptography;
using FaaSCache.Caching;

namespace FaaSCache.Peers;

/// <summary>
/// One body a get's caller may fetch over the bulk connection (<see cref="PeerBulkServer"/>): the bytes (a slice of the
/// owner's map), optionally a wait for bytes still being downloaded (a pipelined remote miss) and a step before the
/// checksum (the owner has the whole object), and the ticket that claims it once.
/// </summary>
internal sealed class PeerBulkOffer
{
    private static readonly byte[] StatusOk = [PeerBulkServer.StatusOk];

    private readonly ReadOnlyMemory<byte> _content;
    private readonly Func<long, CancellationToken, ValueTask<long>>? _waitFor;
    private readonly Func<Task>? _beforeTrailer;
    private readonly CancellationToken _callAborted;
    private readonly string? _filePath;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public PeerBulkOffer(ReadOnlyMemory<byte> content, Func<long, CancellationToken, ValueTask<long>>? waitFor, Func<Task>? beforeTrailer, CancellationToken callAborted, string? filePath = null)
    {
        _filePath = filePath;
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
        try
        {
            // A map being filled is read from its file (its pages were never touched through this process's mapping).
            using Microsoft.Win32.SafeHandles.SafeFileHandle? file = _filePath is null ? null : File.OpenHandle(_filePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            await PeerBulkBody.SendAsync(connection, StatusOk, _content, _waitFor, _beforeTrailer, tamper, aborted.Token, file, FillProgress.ContentOffset).ConfigureAwait(false);
            _done.TrySetResult();
        }
        catch (Exception e)
        {
            _done.TrySetException(e);
            throw;
        }
    }
}
