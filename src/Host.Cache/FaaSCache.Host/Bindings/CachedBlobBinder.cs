using FaaSCache.Caching;
using FaaSCache.Host.AppModel;
using FaaSCache.Host.Invocation;
using FaaSCache.SharedMemory;
using Google.Protobuf;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Bindings;

/// <summary>
/// Blob bindings through the cachelet: an input is a lease on the cache's own map, handed to the worker as
/// <c>RpcSharedMemory</c> (nothing copied on a local hit); a worker without shared-memory support gets the bytes inside
/// the message, copied from the lease (counted as copied). A worker's output map is adopted by the cache as it is; a
/// region inside a map (a non-zero offset) is copied. With the cache on, a worker leaves its output maps to the host, so a
/// map that is not adopted (copied, or refused) is deleted here, when no other process holds it.
/// </summary>
public sealed class CachedBlobBinder(IObjectCache cache, SharedMemoryStore sharedMemory) : IBlobBinder
{
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
                    new InputRecord(binding.Name, key, SourceName(lease.Source), lease.MapName, lease.Count, lease.BytesCopied),
                    lease);
            }

            // Served from the cache all the same, but copied into the message: the copy is measured here.
            TypedData data = asString
                ? new TypedData { String = System.Text.Encoding.UTF8.GetString(lease.Span) }
                : new TypedData { Bytes = ByteString.CopyFrom(lease.Span) };
            return new BoundInput(
                new ParameterBinding { Name = binding.Name, Data = data },
                new InputRecord(binding.Name, key, SourceName(lease.Source), null, lease.Count, lease.BytesCopied + lease.Count),
                lease);
        }
        catch
        {
            lease.Dispose();
            throw;
        }
    }

    /// <inheritdoc />
    public async Task<OutputRecord> StoreOutputAsync(BindingDefinition binding, string key, ParameterBinding value, CancellationToken cancellationToken)
    {
        if (value.RpcSharedMemory is { } shm)
        {
            if (shm.Offset != 0)
            {
                return await StoreRegionCopyAsync(binding, key, shm, cancellationToken).ConfigureAwait(false);
            }

            try
            {
                OutputValues.CheckRegion(binding, key, shm);
            }
            catch (BindingException)
            {
                sharedMemory.DiscardHandedOver(shm.Name);
                throw;
            }

            WriteReceipt adopted;
            try
            {
                adopted = await cache.WriteMapAsync(key, shm.Name, shm.Count, cancellationToken).ConfigureAwait(false);
            }
            catch (SharedMemoryException e)
            {
                throw new BindingException($"Output '{binding.Name}' ({key}): {e.Message}", e);
            }

            return new OutputRecord(binding.Name, key, shm.Name, shm.Count, adopted.Cached, adopted.Persisted, adopted.BytesCopied);
        }

        ReadOnlyMemory<byte> data = OutputValues.Bytes(binding, key, value.Data);
        WriteReceipt written = await cache.WriteAsync(key, data, cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, null, data.Length, false, written.Persisted, written.BytesCopied);
    }

    /// <summary>A region inside a worker's map: its bytes are copied (read with pread) and the map is discarded, bad or not.</summary>
    private async Task<OutputRecord> StoreRegionCopyAsync(BindingDefinition binding, string key, RpcSharedMemory shm, CancellationToken cancellationToken)
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
            sharedMemory.DiscardHandedOver(shm.Name);
        }

        WriteReceipt written = await cache.WriteAsync(key, bytes, cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, shm.Name, bytes.Length, written.Cached, written.Persisted, written.BytesCopied);
    }

    /// <summary>The record's name of a read source.</summary>
    public static string SourceName(ReadSource source) => source switch
    {
        ReadSource.LocalHit => "lh",
        ReadSource.LocalMiss => "lm",
        ReadSource.RemoteHit => "rh",
        ReadSource.RemoteMiss => "rm",
        ReadSource.StorageFallback => "fallback",
        _ => "bypass",
    };
}
