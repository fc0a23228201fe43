namespace FaaSCache.Peers;

/// <summary>§3.2, a remote miss in one pass: the owner's download and the transfer to the requester overlap.</summary>
public sealed partial class CacheletPeerService
{
    /// <summary>
    /// Streams a download as it fills the owner's map: each chunk once it is below the fill mark. The trailer (the
    /// checksum the requester verifies before it keeps anything) goes only after the owner has the whole object; a
    /// download that breaks ends the call with an error instead, and the requester discards what it received.
    /// </summary>
    private async Task SendWhileFillingAsync(string key, FillProgress progress, Task<ObjectLease> completion, int bulkPort, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        bool completionTaken = false;
        try
        {
            long total = progress.Length;
            await responseStream.WriteAsync(
                new GetReply { Header = new GetHeader { Found = true, Version = progress.Version, TotalLength = total, Offset = 0, Length = total, Hit = false, BulkPort = bulkPort } },
                cancellationToken).ConfigureAwait(false);
            var hash = new XxHash3();
            ReadOnlyMemory<byte> content = progress.Content;
            long sent = 0;
            while (sent < total)
            {
                // Waits for a quarter chunk at least (or the end): fewer, fuller messages than one per network read.
                long available = await progress.WaitAsync(Math.Min(sent + (_chunkSize / 4), total) - 1, cancellationToken).ConfigureAwait(false);
                while (sent < available)
                {
                    ReadOnlyMemory<byte> chunk = content.Slice((int)sent, (int)Math.Min(_chunkSize, available - sent));
                    hash.Append(chunk.Span);
                    await responseStream.WriteAsync(new GetReply { Chunk = UnsafeByteOperations.UnsafeWrap(chunk) }, cancellationToken).ConfigureAwait(false);
                    sent += chunk.Length;
                }
            }

            completionTaken = true;
            using ObjectLease lease = await completion.ConfigureAwait(false);
            await responseStream.WriteAsync(new GetReply { Trailer = new Trailer { Xxhash3 = hash.GetCurrentHashAsUInt64() } }, cancellationToken).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            _logger.LogWarning("The download of {Key} a peer was following broke: {Reason}", key, e.Message);
            throw new RpcException(new Status(StatusCode.Unavailable, $"The owner's download of {key} broke: {e.Message}"));
        }
        finally
        {
            progress.ReaderDone();
            if (!completionTaken)
            {
                // The read goes on without us: release its lease (or observe its failure) when it ends.
                _ = completion.ContinueWith(static t => { if (t.IsCompletedSuccessfully) { t.Result.Dispose(); } else { _ = t.Exception; } }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
    }
}
