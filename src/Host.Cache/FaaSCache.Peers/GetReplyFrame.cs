namespace FaaSCache.Peers;

/// <summary>
/// The client's view of one <see cref="GetReply"/>. The generated marshaller would copy every chunk into a
/// new <c>ByteString</c> (a large-object-heap array per MiB); this one copies a chunk's payload straight from
/// gRPC's receive buffer into the destination the reader is waiting to fill (a shared-memory map), or, when
/// there is none, into a pooled array.
/// </summary>
internal sealed class GetReplyFrame : IDisposable
{
    private static readonly AsyncLocal<ChunkSink?> CurrentSink = new();

    private byte[]? _rented;

    private GetReplyFrame(GetReply.PartOneofCase part) => Part = part;

    /// <summary>Gets the method descriptor of <c>Get</c> with this frame as the response type.</summary>
    public static Method<GetRequest, GetReplyFrame> Method { get; } = new(
        MethodType.ServerStreaming,
        PeerWire.ServiceName,
        "Get",
        Marshallers.Create(static (GetRequest r, SerializationContext c) => Serialize(r, c), static c => GetRequest.Parser.ParseFrom(c.PayloadAsReadOnlySequence())),
        Marshallers.Create(static (GetReplyFrame _, SerializationContext _) => throw new NotSupportedException("Get replies are only read by the client."), Deserialize));

    public GetReply.PartOneofCase Part { get; }

    public GetHeader? Header { get; private init; }

    public ulong Checksum { get; private init; }

    /// <summary>Gets the count of chunk bytes already written into the sink's destination (0 when buffered).</summary>
    public int DirectCount { get; private init; }

    /// <summary>Gets the chunk bytes when they were buffered.</summary>
    public ReadOnlyMemory<byte> Buffered { get; private set; }

    /// <summary>
    /// Makes the next deserialized chunk of the current async flow land in the sink's destination when it fits.
    /// Set right before <c>MoveNext</c>: the deserializer runs inside that call, in the same execution context.
    /// </summary>
    public static void SetSink(ChunkSink? sink) => CurrentSink.Value = sink;

    /// <inheritdoc />
    public void Dispose()
    {
        byte[]? rented = Interlocked.Exchange(ref _rented, null);
        if (rented is not null)
        {
            Buffered = default;
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private static void Serialize(GetRequest request, SerializationContext context)
    {
        context.SetPayloadLength(request.CalculateSize());
        Google.Protobuf.MessageExtensions.WriteTo(request, context.GetBufferWriter());
        context.Complete();
    }

    private static GetReplyFrame Deserialize(DeserializationContext context)
    {
        ReadOnlySequence<byte> payload = context.PayloadAsReadOnlySequence();
        if (TryReadChunkPrefix(payload, out int prefix, out int length) && prefix + (long)length == payload.Length && length > 0)
        {
            ReadOnlySequence<byte> data = payload.Slice(prefix);
            ChunkSink? sink = CurrentSink.Value;
            if (sink is not null && sink.Destination.Length >= length)
            {
                data.CopyTo(sink.Destination.Span);
                sink.Destination = Memory<byte>.Empty;
                return new GetReplyFrame(GetReply.PartOneofCase.Chunk) { DirectCount = length };
            }

            byte[] rented = ArrayPool<byte>.Shared.Rent(length);
            data.CopyTo(rented);
            return new GetReplyFrame(GetReply.PartOneofCase.Chunk) { _rented = rented, Buffered = rented.AsMemory(0, length) };
        }

        GetReply reply = GetReply.Parser.ParseFrom(payload);
        return reply.PartCase switch
        {
            GetReply.PartOneofCase.Header => new GetReplyFrame(GetReply.PartOneofCase.Header) { Header = reply.Header },
            GetReply.PartOneofCase.Trailer => new GetReplyFrame(GetReply.PartOneofCase.Trailer) { Checksum = reply.Trailer.Xxhash3 },
            GetReply.PartOneofCase.Chunk => new GetReplyFrame(GetReply.PartOneofCase.Chunk) { Buffered = reply.Chunk.Memory },
            _ => new GetReplyFrame(GetReply.PartOneofCase.None),
        };
    }

    /// <summary>A message that is only field 2 (<c>chunk</c>, length-delimited): tag 0x12, varint length, bytes.</summary>
    private static bool TryReadChunkPrefix(ReadOnlySequence<byte> payload, out int prefix, out int length)
    {
        prefix = 0;
        length = 0;
        var reader = new SequenceReader<byte>(payload);
        if (!reader.TryRead(out byte tag) || tag != ((GetReply.ChunkFieldNumber << 3) | 2))
        {
            return false;
        }

        uint value = 0;
        for (int shift = 0; shift < 35; shift += 7)
        {
            if (!reader.TryRead(out byte b))
            {
                return false;
            }

            value |= (uint)(b & 0x7f) << shift;
            if ((b & 0x80) == 0)
            {
                if (value > int.MaxValue)
                {
                    return false;
                }

                prefix = (int)reader.Consumed;
                length = (int)value;
                return true;
            }
        }

        return false;
    }
}

/// <summary>Where the next chunk of a get should land (one per body stream, used by one reader at a time).</summary>
internal sealed class ChunkSink
{
    public Memory<byte> Destination { get; set; }
}
