namespace FaaSCache.Host.Bindings;

/// <summary>
/// Blob bindings through the cachelet: an input is a lease on the cache's own map, handed to the worker as
/// <c>RpcSharedMemory</c> (nothing copied on a local hit); a worker without shared-memory support gets the bytes inside
/// the message, copied from the lease (counted as copied). A worker's output map is adopted by the cache as it is, once no
/// other process holds it (a worker that still does is asked to close it first); a region inside a map (a non-zero offset),
/// or a map the worker will not let go, is copied. With the cache on, a worker leaves its output maps to the host, so a map
/// that is not adopted (copied, or refused) is deleted here once no process holds it.
/// </summary>
public sealed class CachedBlobBinder(IObjectCache cache, SharedMemoryStore sharedMemory) : IBlobBinder
{
    /// <inheritdoc />
    public async Task<string?> VersionOfAsync(string key, CancellationToken cancellationToken)
    {
        try
        {
            using ObjectLease lease = await cache.ReadAsync(key, cancellationToken).ConfigureAwait(false);
            return lease.Version;
        }
        catch (BlobNotFoundException)
        {
            return null;
        }
    }

    /// <inheritdoc />
    public async Task<BoundInput> BindInputAsync(BindingDefinition binding, string key, bool workerMapsSharedMemory, CancellationToken cancellationToken)
    {
        ObjectLease lease = await cache.ReadAsync(key, cancellationToken).ConfigureAwait(false);
        try
        {
            bool asString = OutputValues.AsString(binding);
            if (workerMapsSharedMemory && lease.InSharedMemory)
            {
                var shared = new RpcSharedMemory { Name = lease.MapName, Offset = lease.Offset, Count = lease.Count, Type = asString ? RpcDataType.String : RpcDataType.Bytes };
                return new BoundInput(
                    new ParameterBinding { Name = binding.Name, RpcSharedMemory = shared },
                    new InputRecord(binding.Name, key, lease.Source.ShortName(), lease.MapName, lease.Count, lease.BytesCopied, lease.Version),
                    lease);
            }

            // Served from the cache all the same, but copied into the message (counted here): the bytes are wrapped over
            // the cache's map, not copied into an array first, so the one copy is the message's serialization onto the
            // stream (WorkerChannel sends it before the lease is released).
            TypedData data = asString
                ? new TypedData { String = System.Text.Encoding.UTF8.GetString(lease.Span) }
                : new TypedData { Bytes = UnsafeByteOperations.UnsafeWrap(lease.Memory) };
            return new BoundInput(
                new ParameterBinding { Name = binding.Name, Data = data },
                new InputRecord(binding.Name, key, lease.Source.ShortName(), null, lease.Count, lease.BytesCopied + lease.Count, lease.Version),
                lease);
        }
        catch
        {
            lease.Dispose();
            throw;
        }
    }

    /// <inheritdoc />
    public async Task<BoundInput> BindDeferredAsync(BindingDefinition binding, string key, CancellationToken cancellationToken)
    {
        ObjectLease lease = await cache.ReadAsync(key, cancellationToken).ConfigureAwait(false);
        return new BoundInput(
            new ParameterBinding { Name = binding.Name, Data = DeferredBinding.ModelBindingData(binding, key) },
            new InputRecord(binding.Name, key, lease.Source.ShortName(), lease.MapName, lease.Count, lease.BytesCopied, lease.Version),
            lease);
    }

    /// <inheritdoc />
    public async Task<OutputRecord> StoreOutputAsync(BindingDefinition binding, string key, ParameterBinding value, IWorkerOutputMaps worker, CancellationToken cancellationToken)
    {
        if (value.RpcSharedMemory is not { } shm)
        {
            ReadOnlyMemory<byte> data = OutputValues.Bytes(binding, key, value.Data);
            WriteReceipt written = await cache.WriteAsync(key, data, cancellationToken).ConfigureAwait(false);
            return new OutputRecord(binding.Name, key, null, data.Length, false, written.Persisted, written.BytesCopied, written.Version);
        }

        // Journaled before anything else, so that whatever happens next the map is not left behind.
        sharedMemory.TrackHandedOver(shm.Name);
        if (shm.Offset != 0)
        {
            return await StoreCopyAsync(binding, key, shm, cancellationToken).ConfigureAwait(false);
        }

        try
        {
            OutputValues.CheckRegion(binding, key, shm);
        }
        catch (BindingException)
        {
            sharedMemory.DiscardWhenFree(shm.Name);
            throw;
        }

        try
        {
            return await AdoptAsync(binding, key, shm, cancellationToken).ConfigureAwait(false);
        }
        catch (SharedMemoryMapInUseException)
        {
            // The worker still holds it (the real Python worker keeps output maps until the host closes them): ask it to
            // close the map, then prove again that nobody holds it. Its answer is not trusted; the proof decides.
            _ = await worker.CloseAsync(shm.Name, cancellationToken).ConfigureAwait(false);
        }
        catch (SharedMemoryException e)
        {
            sharedMemory.DiscardWhenFree(shm.Name);
            throw new BindingException($"Output '{binding.Name}' ({key}): {e.Message}", e);
        }

        try
        {
            return await AdoptAsync(binding, key, shm, cancellationToken).ConfigureAwait(false);
        }
        catch (SharedMemoryMapInUseException e)
        {
            if (sharedMemory.IsHeldBy(shm.Name, worker.ProcessId))
            {
                // The worker that returned it still holds it after the close: its bytes are copied (pread: a shrink is a
                // clear error, not a SIGBUS), and the map is deleted once its last holder lets go.
                return await StoreCopyAsync(binding, key, shm, cancellationToken).ConfigureAwait(false);
            }

            // Held by another process only (another app's host, say): not the worker's to hand over; nothing is read,
            // taken or deleted.
            sharedMemory.ForgetForeign(shm.Name);
            throw new BindingException(
                $"Output '{binding.Name}' ({key}): {e.Message} It is held by a process other than the worker (pid {worker.ProcessId}) that returned it, so it was neither taken over nor read.", e);
        }
        catch (SharedMemoryException e)
        {
            sharedMemory.DiscardWhenFree(shm.Name);
            throw new BindingException($"Output '{binding.Name}' ({key}): {e.Message}", e);
        }
    }

    /// <inheritdoc />
    public void DiscardOutputMap(string mapName)
    {
        sharedMemory.TrackHandedOver(mapName);
        sharedMemory.DiscardWhenFree(mapName);
    }

    /// <summary>Takes the worker's map over as the cached object (no copy) once no other process holds it.</summary>
    private async Task<OutputRecord> AdoptAsync(BindingDefinition binding, string key, RpcSharedMemory shm, CancellationToken cancellationToken)
    {
        WriteReceipt adopted = await cache.WriteMapAsync(key, shm.Name, shm.Count, cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, shm.Name, shm.Count, adopted.Cached, adopted.Persisted, adopted.BytesCopied, adopted.Version);
    }

    /// <summary>
    /// A region the cache does not take over (inside a map, or in a map a worker still holds): its bytes are copied (read
    /// with pread, which a shrinking file cannot fault) and the map is deleted as soon as no process holds it, bad or not.
    /// </summary>
    private async Task<OutputRecord> StoreCopyAsync(BindingDefinition binding, string key, RpcSharedMemory shm, CancellationToken cancellationToken)
    {
        byte[] bytes;
        try
        {
            OutputValues.CheckRegion(binding, key, shm);
            bytes = sharedMemory.ReadForeign(shm.Name, shm.Offset, shm.Count);
        }
        catch (SharedMemoryException e)
        {
            throw new BindingException($"Output '{binding.Name}' ({key}): {e.Message}", e);
        }
        finally
        {
            sharedMemory.DiscardWhenFree(shm.Name);
        }

        WriteReceipt written = await cache.WriteAsync(key, bytes, cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, shm.Name, bytes.Length, Adopted: false, written.Persisted, written.BytesCopied, written.Version);
    }
}
