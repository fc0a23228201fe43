namespace FaaSCache.Host.Bindings;

/// <summary>
/// Blob bindings as the stock host serves them (<c>--cache off</c>): every input is downloaded and sent inside the gRPC
/// message; every output is uploaded, read from the worker's map through the shared-memory store when it came in one.
/// </summary>
public sealed class StockBlobBinder(IBlobStore storage, SharedMemoryStore sharedMemory) : IBlobBinder
{
    /// <inheritdoc />
    public Task<string?> VersionOfAsync(string key, CancellationToken cancellationToken) => storage.GetVersionAsync(key, cancellationToken);

    /// <inheritdoc />
    public async Task<BoundInput> BindInputAsync(BindingDefinition binding, string key, bool workerMapsSharedMemory, CancellationToken cancellationToken)
    {
        FetchResult<byte[]> fetched = await storage.FetchAsync(key, null, ReadAllAsync, cancellationToken).ConfigureAwait(false);
        byte[] bytes = fetched.Value!;
        TypedData data = OutputValues.AsString(binding)
            ? new TypedData { String = System.Text.Encoding.UTF8.GetString(bytes) }
            : new TypedData { Bytes = UnsafeByteOperations.UnsafeWrap(bytes) };
        return new BoundInput(new ParameterBinding { Name = binding.Name, Data = data }, new InputRecord(binding.Name, key, "storage", null, bytes.Length, bytes.Length, fetched.ETag), null);
    }

    /// <inheritdoc />
    public Task<BoundInput> BindDeferredAsync(BindingDefinition binding, string key, CancellationToken cancellationToken)
        => Task.FromResult(new BoundInput(
            new ParameterBinding { Name = binding.Name, Data = DeferredBinding.ModelBindingData(binding, key) },
            new InputRecord(binding.Name, key, "deferred", null, 0, 0),
            null));

    /// <inheritdoc />
    public async Task<OutputRecord> StoreOutputAsync(BindingDefinition binding, string key, ParameterBinding value, IWorkerOutputMaps worker, CancellationToken cancellationToken)
    {
        // Read with pread, which a worker still holding the map cannot fault; with the cache off the worker deletes its own
        // map when the host closes it after the invocation, as with the stock host.
        ReadOnlyMemory<byte> bytes;
        try
        {
            if (value.RpcSharedMemory is { } shm)
            {
                OutputValues.CheckRegion(binding, key, shm);
                bytes = sharedMemory.ReadForeign(shm.Name, shm.Offset, shm.Count);
            }
            else
            {
                bytes = OutputValues.Bytes(binding, key, value.Data);
            }
        }
        catch (SharedMemoryException e)
        {
            throw new BindingException($"Output '{binding.Name}' ({key}): {e.Message}", e);
        }

        string etag = await storage.UploadAsync(key, new MemoryStream(bytes.ToArray(), writable: false), cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, value.RpcSharedMemory?.Name, bytes.Length, false, true, bytes.Length, etag);
    }

    /// <inheritdoc />
    public void DiscardOutputMap(string mapName)
    {
        // With the cache off the worker deletes its output maps when the host closes them.
    }

    private static async Task<byte[]> ReadAllAsync(long length, string etag, Stream content, CancellationToken cancellationToken)
    {
        var bytes = new byte[length];
        await content.ReadExactlyAsync(bytes, cancellationToken).ConfigureAwait(false);
        return bytes;
    }
}
