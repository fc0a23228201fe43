using Google.Protobuf;
using Grpc.Core.Interceptors;

namespace FaaSCache.Peers.Tests;

/// <summary>
/// A test-only server interceptor that flips one byte in the <see cref="ChunkToCorrupt"/>-th data chunk of every
/// get it serves and of every put it receives: the damage a bad NIC, a bit flip in memory or a buggy proxy does
/// after the sender computed its checksum. Bodies sent over the bulk connection get the same damage from
/// <see cref="CorruptBulkSliceAsync"/>.
/// </summary>
internal sealed class CorruptingInterceptor : Interceptor
{
    public const int ChunkToCorrupt = 2;

    /// <summary>The byte a bulk transfer (<see cref="PeerBulkServer.Tamper"/>) flips: inside the second MiB, like the second chunk.</summary>
    public const long BulkByteToCorrupt = PeerWire.DefaultChunkSize + 1000;

    /// <summary>Flips <see cref="BulkByteToCorrupt"/> on the wire of a bulk transfer (after the sender hashed it).</summary>
    public static ValueTask<ReadOnlyMemory<byte>> CorruptBulkSliceAsync(long offset, ReadOnlyMemory<byte> slice, CancellationToken cancellationToken)
    {
        if (offset > BulkByteToCorrupt || offset + slice.Length <= BulkByteToCorrupt)
        {
            return ValueTask.FromResult(slice);
        }

        byte[] copy = slice.ToArray();
        copy[BulkByteToCorrupt - offset] ^= 0x5a;
        return ValueTask.FromResult<ReadOnlyMemory<byte>>(copy);
    }

    public override Task ServerStreamingServerHandler<TRequest, TResponse>(TRequest request, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, ServerStreamingServerMethod<TRequest, TResponse> continuation)
        => continuation(request, new Writer<TResponse>(responseStream), context);

    public override Task<TResponse> ClientStreamingServerHandler<TRequest, TResponse>(IAsyncStreamReader<TRequest> requestStream, ServerCallContext context, ClientStreamingServerMethod<TRequest, TResponse> continuation)
        => continuation(new Reader<TRequest>(requestStream), context);

    private static ByteString Flip(ByteString chunk)
    {
        byte[] bytes = chunk.ToByteArray();
        bytes[bytes.Length / 2] ^= 0x5a;
        return ByteString.CopyFrom(bytes);
    }

    private sealed class Writer<T>(IServerStreamWriter<T> inner) : IServerStreamWriter<T>
    {
        private int _chunks;

        public WriteOptions? WriteOptions
        {
            get => inner.WriteOptions;
            set => inner.WriteOptions = value;
        }

        public Task WriteAsync(T message) => inner.WriteAsync(Corrupt(message));

        public Task WriteAsync(T message, CancellationToken cancellationToken) => inner.WriteAsync(Corrupt(message), cancellationToken);

        private T Corrupt(T message)
            => message is GetReply { PartCase: GetReply.PartOneofCase.Chunk } reply && ++_chunks == ChunkToCorrupt
                ? (T)(object)new GetReply { Chunk = Flip(reply.Chunk) }
                : message;
    }

    private sealed class Reader<T>(IAsyncStreamReader<T> inner) : IAsyncStreamReader<T>
    {
        private int _chunks;

        public T Current { get; private set; } = default!;

        public async Task<bool> MoveNext(CancellationToken cancellationToken)
        {
            if (!await inner.MoveNext(cancellationToken))
            {
                return false;
            }

            T message = inner.Current;
            Current = message is PutRequest { PartCase: PutRequest.PartOneofCase.Chunk } put && ++_chunks == ChunkToCorrupt
                ? (T)(object)new PutRequest { Chunk = Flip(put.Chunk) }
                : message;
            return true;
        }
    }
}
