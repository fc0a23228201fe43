namespace FaaSCache.Peers;

/// <summary>§3.2, a whole get in one round trip on a kept-open bulk connection (the <c>G</c> request).</summary>
public sealed partial class PeerBulkServer
{
    internal const byte StatusNotFound = 3;
    internal const byte StatusNotCached = 4;
    internal const byte StatusUseGrpc = 5;
    internal const byte StatusFailed = 6;

    /// <summary>
    /// Serves a <c>G</c> request as the gRPC <c>Get</c> serves a whole object (a miss the owner downloads is streamed as it
    /// fills, the checksum once it is whole). Reply: OK, hit (1 byte), version length (uint16, big-endian), version
    /// (UTF-8), length (int64, little-endian), the bytes, their XxHash3; or <see cref="StatusNotFound"/> /
    /// <see cref="StatusFailed"/> with a message (uint16 length, UTF-8), <see cref="StatusNotCached"/> (not held and not
    /// to be fetched) or <see cref="StatusUseGrpc"/>. False when the connection must close (a body broke off).
    /// </summary>
    private async Task<bool> ServeGetAsync(Socket connection, string key, bool fetchIfMissing, CancellationToken stopping)
    {
        if (_cache is null)
        {
            await SendStatusAsync(connection, StatusUseGrpc, null, stopping).ConfigureAwait(false);
            return true;
        }

        PeerGetServe? served;
        try
        {
            BlobKey.Parse(key);
            served = await _cache.ServePeerGetAsync(key, fetchIfMissing, follow: true, stopping).ConfigureAwait(false);
        }
        catch (BlobNotFoundException e)
        {
            await SendStatusAsync(connection, StatusNotFound, e.Message, stopping).ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            _logger.LogWarning("A bulk get of {Key} failed: {Reason}", key, e.Message);
            await SendStatusAsync(connection, StatusFailed, e.Message, stopping).ConfigureAwait(false);
            return true;
        }

        if (served is null)
        {
            await SendStatusAsync(connection, StatusNotCached, null, stopping).ConfigureAwait(false);
            return true;
        }

        if (served.Progress is { } progress)
        {
            await SendWhileFillingAsync(connection, progress, served.Completion!, stopping).ConfigureAwait(false);
            return true;
        }

        using ObjectLease lease = served.Lease!;
        if (lease.Count > int.MaxValue)
        {
            await SendStatusAsync(connection, StatusUseGrpc, null, stopping).ConfigureAwait(false);
            return true;
        }

        // Large bodies are read from the map's file: its pages in this process's mapping may never have been touched.
        using Microsoft.Win32.SafeHandles.SafeFileHandle? file = lease.Count > PeerBulkBody.OneSendSize ? File.OpenHandle(lease.MapPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete) : null;
        await PeerBulkBody.SendAsync(connection, Prefix(lease.Version, lease.Count, served.Hit), lease.Memory, null, null, Tamper, stopping, file, FillProgress.ContentOffset).ConfigureAwait(false);
        return true;
    }

    private static byte[] Prefix(string version, long length, bool hit)
    {
        byte[] versionBytes = Encoding.UTF8.GetBytes(version);
        byte[] prefix = new byte[1 + 1 + 2 + versionBytes.Length + sizeof(long)];
        prefix[0] = StatusOk;
        prefix[1] = hit ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16BigEndian(prefix.AsSpan(2), checked((ushort)versionBytes.Length));
        versionBytes.CopyTo(prefix, 4);
        BinaryPrimitives.WriteInt64LittleEndian(prefix.AsSpan(4 + versionBytes.Length), length);
        return prefix;
    }

    private static async Task SendStatusAsync(Socket connection, byte status, string? message, CancellationToken cancellationToken)
    {
        byte[] text = message is null ? [] : Encoding.UTF8.GetBytes(message.Length > 2000 ? message[..2000] : message);
        byte[] reply = new byte[1 + (message is null ? 0 : 2 + text.Length)];
        reply[0] = status;
        if (message is not null)
        {
            BinaryPrimitives.WriteUInt16BigEndian(reply.AsSpan(1), (ushort)text.Length);
            text.CopyTo(reply, 3);
        }

        await PeerBulkBody.SendAllAsync(connection, reply, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>A remote miss: the bytes go as the owner's download fills its map, the checksum once it is whole and admitted.</summary>
    private async Task SendWhileFillingAsync(Socket connection, FillProgress progress, Task<ObjectLease> completion, CancellationToken stopping)
    {
        ObjectLease? lease = null;
        bool completionTaken = false;
        try
        {
            using Microsoft.Win32.SafeHandles.SafeFileHandle file = File.OpenHandle(progress.FilePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            await PeerBulkBody.SendAsync(
                connection,
                Prefix(progress.Version, progress.Length, hit: false),
                progress.Content,
                progress.WaitAsync,
                async () =>
                {
                    completionTaken = true;
                    lease = await completion.ConfigureAwait(false);
                },
                Tamper,
                stopping,
                file,
                FillProgress.ContentOffset).ConfigureAwait(false);
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
