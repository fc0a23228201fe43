namespace FaaSCache.Host.Bindings;

/// <summary>An input bound for one invocation: what the worker gets, what the record says, and what to release after.</summary>
/// <param name="Binding">The parameter sent to the worker.</param>
/// <param name="Record">How the input reached the worker.</param>
/// <param name="Hold">What keeps the input alive until the invocation ends (a cache lease), if anything.</param>
public sealed record BoundInput(ParameterBinding Binding, InputRecord Record, IDisposable? Hold);

/// <summary>
/// How blob bindings are served: <see cref="CachedBlobBinder"/> (through the cachelet, in shared memory) or
/// <see cref="StockBlobBinder"/> (as the stock host does: bytes inside the gRPC messages). The host picks one at start.
/// </summary>
public interface IBlobBinder
{
    /// <summary>
    /// Binds blob input <paramref name="binding"/> at <paramref name="key"/>. <paramref name="workerMapsSharedMemory"/>
    /// is the worker's <c>SharedMemoryDataTransfer</c> capability: without it the bytes go inside the message.
    /// Throws <see cref="Storage.BlobNotFoundException"/> when the blob does not exist.
    /// </summary>
    Task<BoundInput> BindInputAsync(BindingDefinition binding, string key, bool workerMapsSharedMemory, CancellationToken cancellationToken);

    /// <summary>
    /// Binds an SDK-type input: <c>ModelBindingData</c> naming the blob, which the worker reads itself (through the SDK
    /// endpoint when the cache is on). With the cache on the blob is read into the cache first, so the record says how it
    /// was served and the worker's read is a local hit; the lease is held until the invocation ends.
    /// </summary>
    Task<BoundInput> BindDeferredAsync(BindingDefinition binding, string key, CancellationToken cancellationToken);

    /// <summary>
    /// Stores a blob output the worker returned. <paramref name="worker"/> asks the worker to close an output map it still
    /// holds (the real Python worker keeps them open until <c>CloseSharedMemoryResourcesRequest</c>).
    /// </summary>
    Task<OutputRecord> StoreOutputAsync(BindingDefinition binding, string key, ParameterBinding value, IWorkerOutputMaps worker, CancellationToken cancellationToken);

    /// <summary>
    /// The version (ETag) of the blob at <paramref name="key"/> a read would get now, or null when it does not exist:
    /// what a cached function result was made from. Through the cache this is a read (a local hit when cached, checked
    /// against storage under <c>strong</c>, and the object stays cached for the invocation that may follow).
    /// </summary>
    Task<string?> VersionOfAsync(string key, CancellationToken cancellationToken);

    /// <summary>An output map nothing stores (its binding is unknown, or an earlier output failed): not to be left behind.</summary>
    void DiscardOutputMap(string mapName);
}

/// <summary>The worker that returned an invocation's outputs, as far as its output maps go.</summary>
public interface IWorkerOutputMaps
{
    /// <summary>Gets the worker's process id (0 when unknown).</summary>
    int ProcessId { get; }

    /// <summary>Asks the worker to close output map <paramref name="mapName"/> now; true when it says it did.</summary>
    Task<bool> CloseAsync(string mapName, CancellationToken cancellationToken);
}

/// <summary>What both binders share: the bytes of an output value that did not come in shared memory.</summary>
internal static class OutputValues
{
    public static ReadOnlyMemory<byte> Bytes(BindingDefinition binding, string key, TypedData data) => data.DataCase switch
    {
        TypedData.DataOneofCase.Bytes => data.Bytes.Memory,
        TypedData.DataOneofCase.Stream => data.Stream.Memory,
        TypedData.DataOneofCase.String => System.Text.Encoding.UTF8.GetBytes(data.String),
        TypedData.DataOneofCase.Json => System.Text.Encoding.UTF8.GetBytes(data.Json),
        TypedData.DataOneofCase.None => throw new BindingException($"Output '{binding.Name}' ({key}) got no value."),
        _ => throw new BindingException($"Output '{binding.Name}' ({key}): a {data.DataCase} value cannot be written to a blob (use bytes or a string)."),
    };

    /// <summary>Refuses a region no blob can come from: a negative count, or a type that is not one blob's content.</summary>
    public static void CheckRegion(BindingDefinition binding, string key, RpcSharedMemory shm)
    {
        if (shm.Count < 0 || shm.Offset < 0 || shm.Type is not (RpcDataType.Unknown or RpcDataType.Bytes or RpcDataType.String or RpcDataType.Json or RpcDataType.Stream))
        {
            throw new BindingException(
                $"Output '{binding.Name}' ({key}): shared-memory map '{shm.Name}' at offset {shm.Offset}, count {shm.Count}, type {shm.Type} " +
                "(offset and count must be >= 0; type bytes, string, json or stream: the content of one blob).");
        }
    }

    public static bool AsString(BindingDefinition binding) => string.Equals(binding.DataType, "string", StringComparison.OrdinalIgnoreCase);
}
