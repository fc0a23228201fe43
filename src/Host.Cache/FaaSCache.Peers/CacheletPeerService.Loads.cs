namespace FaaSCache.Peers;

/// <summary>§4, bandwidth scaling: a range of an object fetched from storage for another instance's parallel load, and the rate probe.</summary>
public sealed partial class CacheletPeerService
{
    /// <summary>The largest probe a caller may ask for.</summary>
    public const long MaxProbeLength = 64L << 20;

    /// <summary>
    /// Fetches the requested range of one version from storage and streams it as it arrives (no copy kept here): the
    /// caller's load runs at this instance's storage bandwidth, not at the caller's.
    /// </summary>
    private async Task ServeRangeLoadAsync(GetRequest request, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        if (request.Range is not { Offset: >= 0, Length: > 0 } range)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"A range load of {request.Key} needs a range with offset >= 0 and length > 0 (got {request.Range})."));
        }

        byte[] buffer = ArrayPool<byte>.Shared.Rent(_chunkSize);
        try
        {
            await _cachelet.ServeRangeLoadAsync(
                request.Key,
                request.LoadVersion,
                range.Offset,
                range.Length,
                async (length, etag, content, token) =>
                {
                    await responseStream.WriteAsync(
                        new GetReply { Header = new GetHeader { Found = true, Version = etag, TotalLength = range.Offset + length, Offset = range.Offset, Length = length, Hit = false } },
                        token).ConfigureAwait(false);
                    var hash = new XxHash3();
                    for (long sent = 0; sent < length;)
                    {
                        int n = await content.ReadAtLeastAsync(buffer.AsMemory(0, (int)Math.Min(_chunkSize, length - sent)), 1, throwOnEndOfStream: false, token).ConfigureAwait(false);
                        if (n == 0)
                        {
                            throw new IOException($"Storage ended the range of {request.Key} after {sent} of {length} bytes.");
                        }

                        hash.Append(buffer.AsSpan(0, n));

                        // The serializer copies the bytes before WriteAsync completes, so the buffer can be refilled.
                        await responseStream.WriteAsync(new GetReply { Chunk = UnsafeByteOperations.UnsafeWrap(buffer.AsMemory(0, n)) }, token).ConfigureAwait(false);
                        sent += n;
                    }

                    await responseStream.WriteAsync(new GetReply { Trailer = new Trailer { Xxhash3 = hash.GetCurrentHashAsUInt64() } }, token).ConfigureAwait(false);
                    return length;
                },
                cancellationToken).ConfigureAwait(false);
        }
        catch (BlobNotFoundException e)
        {
            throw new RpcException(new Status(StatusCode.NotFound, e.Message));
        }
        catch (BlobVersionChangedException e)
        {
            throw new RpcException(new Status(StatusCode.FailedPrecondition, e.Message));
        }
        catch (ArgumentOutOfRangeException e)
        {
            throw new RpcException(new Status(StatusCode.OutOfRange, e.Message));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Streams zeros from memory: what the caller measures is the path between the two instances alone.</summary>
    private async Task ServeProbeAsync(long length, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        if (length > MaxProbeLength)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"A probe of {length} bytes is larger than the {MaxProbeLength} allowed."));
        }

        await responseStream.WriteAsync(new GetReply { Header = new GetHeader { Found = true, Version = "probe", TotalLength = length, Offset = 0, Length = length, Hit = true } }, cancellationToken)
            .ConfigureAwait(false);
        byte[] zeros = new byte[Math.Min(_chunkSize, length)];
        var hash = new XxHash3();
        for (long sent = 0; sent < length;)
        {
            int n = (int)Math.Min(zeros.Length, length - sent);
            hash.Append(zeros.AsSpan(0, n));
            await responseStream.WriteAsync(new GetReply { Chunk = UnsafeByteOperations.UnsafeWrap(zeros.AsMemory(0, n)) }, cancellationToken).ConfigureAwait(false);
            sent += n;
        }

        await responseStream.WriteAsync(new GetReply { Trailer = new Trailer { Xxhash3 = hash.GetCurrentHashAsUInt64() } }, cancellationToken).ConfigureAwait(false);
    }
}
