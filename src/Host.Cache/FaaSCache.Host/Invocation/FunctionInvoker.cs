using System.Diagnostics;
using FaaSCache.Caching;
using FaaSCache.Host.AppModel;
using FaaSCache.Host.Bindings;
using FaaSCache.Host.Workers;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Google.Protobuf;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Invocation;

/// <summary>What an invocation returned to its trigger.</summary>
/// <param name="Http">The HTTP response binding, if any.</param>
/// <param name="Record">The invocation record.</param>
public sealed record InvocationOutcome(RpcHttp? Http, InvocationRecord Record);

/// <summary>
/// Runs one invocation: binds blob inputs (a cache lease's map as <c>RpcSharedMemory</c>, or bytes when the
/// cache is off), sends it to the function's worker, stores outputs (adopting the worker's maps into the
/// cache without a copy) and releases everything.
/// </summary>
public sealed class FunctionInvoker(
    FunctionApp app,
    IObjectCache? cachelet,
    IBlobStore storage,
    SharedMemoryStore sharedMemory,
    IReadOnlyDictionary<string, LanguageWorkerManager> workers,
    InvocationLog log,
    ILogger<FunctionInvoker> logger)
{
    private readonly Dictionary<BindingDefinition, BindingTemplate> _templates = app.Functions
        .SelectMany(f => f.Bindings).Where(b => b.IsBlob).ToDictionary(b => b, b => new BindingTemplate(b.Path!));

    /// <summary>Gets the template of a blob binding.</summary>
    public BindingTemplate TemplateOf(BindingDefinition binding) => _templates[binding];

    /// <summary>Invokes <paramref name="function"/>.</summary>
    /// <param name="function">The function.</param>
    /// <param name="trigger">The trigger's own parameter (HTTP), or null for a blob trigger.</param>
    /// <param name="triggerBlobKey">The blob that fired a blob trigger.</param>
    /// <param name="triggerKind">http, blob or cache (for the record).</param>
    /// <param name="bindingData">Values for path templates (route, query, blob-name captures).</param>
    /// <param name="triggerMetadata">Trigger metadata for the worker.</param>
    /// <param name="cancellationToken">Cancellation.</param>
    public async Task<InvocationOutcome> InvokeAsync(
        FunctionDefinition function,
        TypedData? trigger,
        string? triggerBlobKey,
        string triggerKind,
        IReadOnlyDictionary<string, string> bindingData,
        IDictionary<string, TypedData> triggerMetadata,
        CancellationToken cancellationToken)
    {
        var record = new InvocationRecord { InvocationId = Guid.NewGuid().ToString(), Function = function.Name, Trigger = triggerKind };
        var clock = Stopwatch.StartNew();
        var leases = new List<ObjectLease>();
        LanguageWorkerManager manager = workers[function.Language];
        try
        {
            // A language whose worker cannot start fails at once, before any input is read.
            manager.ThrowIfUnavailable();
            var request = new InvocationRequest { InvocationId = record.InvocationId, FunctionId = function.FunctionId };
            request.TriggerMetadata.Add(triggerMetadata);
            foreach (BindingDefinition binding in function.Bindings.Where(b => b.Direction != BindingDirection.Out))
            {
                if (binding.IsTrigger && !binding.IsBlob)
                {
                    request.InputData.Add(new ParameterBinding { Name = binding.Name, Data = trigger ?? new TypedData() });
                }
                else if (binding.IsBlob)
                {
                    string key = binding.IsTrigger ? triggerBlobKey! : _templates[binding].Resolve(bindingData, binding.Name);
                    request.InputData.Add(await BindBlobInputAsync(binding, key, record, leases, cancellationToken).ConfigureAwait(false));
                }
            }

            WorkerChannel channel = await manager.GetReadyChannelAsync(cancellationToken).ConfigureAwait(false);
            InvocationResponse response = await channel.InvokeAsync(request, function, cancellationToken).ConfigureAwait(false);
            if (response.Result?.Status != StatusResult.Types.Status.Success)
            {
                string why = response.Result?.Exception?.Message is { Length: > 0 } m ? m : response.Result?.Result ?? "no result";
                throw new FunctionInvocationException($"Function '{function.Name}' (invocation {record.InvocationId}) failed: {why}");
            }

            RpcHttp? http = await StoreOutputsAsync(function, response, bindingData, record, channel, cancellationToken).ConfigureAwait(false);
            record.Status = "succeeded";
            return new InvocationOutcome(http, record);
        }
        catch (Exception e)
        {
            record.Status = "failed";
            record.Error = e.Message;
            throw;
        }
        finally
        {
            leases.ForEach(l => l.Dispose());
            record.DurationMs = clock.Elapsed.TotalMilliseconds;
            log.Add(record);
        }
    }

    private async Task<ParameterBinding> BindBlobInputAsync(BindingDefinition binding, string key, InvocationRecord record, List<ObjectLease> leases, CancellationToken cancellationToken)
    {
        bool asString = string.Equals(binding.DataType, "string", StringComparison.OrdinalIgnoreCase);
        try
        {
            if (cachelet is not null)
            {
                ObjectLease lease = await cachelet.ReadAsync(key, cancellationToken).ConfigureAwait(false);
                leases.Add(lease);
                record.Inputs.Add(new InputRecord(binding.Name, key, SourceName(lease.Source), lease.MapName, lease.Count, lease.BytesCopied));
                return new ParameterBinding
                {
                    Name = binding.Name,
                    RpcSharedMemory = new RpcSharedMemory { Name = lease.MapName, Offset = lease.Offset, Count = lease.Count, Type = asString ? RpcDataType.String : RpcDataType.Bytes },
                };
            }

            // The stock host's way: download, then send the bytes inside the gRPC message.
            FetchResult<byte[]> fetched = await storage.FetchAsync(key, null, ReadAllAsync, cancellationToken).ConfigureAwait(false);
            byte[] bytes = fetched.Value!;
            record.Inputs.Add(new InputRecord(binding.Name, key, "storage", null, bytes.Length, bytes.Length));
            return new ParameterBinding
            {
                Name = binding.Name,
                Data = asString ? new TypedData { String = System.Text.Encoding.UTF8.GetString(bytes) } : new TypedData { Bytes = UnsafeByteOperations.UnsafeWrap(bytes) },
            };
        }
        catch (BlobNotFoundException)
        {
            // As in Azure Functions, a missing input blob binds as null.
            logger.LogWarning("Input blob {Key} of binding '{Binding}' does not exist; the function gets null", key, binding.Name);
            record.Inputs.Add(new InputRecord(binding.Name, key, "missing", null, 0, 0));
            return new ParameterBinding { Name = binding.Name, Data = new TypedData() };
        }
    }

    private static async Task<byte[]> ReadAllAsync(long length, string etag, Stream content, CancellationToken cancellationToken)
    {
        var bytes = new byte[length];
        await content.ReadExactlyAsync(bytes, cancellationToken).ConfigureAwait(false);
        return bytes;
    }

    private async Task<RpcHttp?> StoreOutputsAsync(
        FunctionDefinition function,
        InvocationResponse response,
        IReadOnlyDictionary<string, string> bindingData,
        InvocationRecord record,
        WorkerChannel channel,
        CancellationToken cancellationToken)
    {
        RpcHttp? http = null;
        var workerMaps = new List<string>();
        var values = response.OutputData.ToList();
        if (response.ReturnValue is { } returned && returned.DataCase != TypedData.DataOneofCase.None)
        {
            values.Add(new ParameterBinding { Name = "$return", Data = returned });
        }

        try
        {
            foreach (ParameterBinding value in values)
            {
                BindingDefinition? binding = function.Bindings.FirstOrDefault(b => b.Direction != BindingDirection.In && string.Equals(b.Name, value.Name, StringComparison.OrdinalIgnoreCase));
                if (binding is null)
                {
                    logger.LogWarning("Function '{Function}' returned a value for '{Name}', which is not one of its output bindings; ignored", function.Name, value.Name);
                    continue;
                }

                if (value.RpcSharedMemory is { } shm)
                {
                    workerMaps.Add(shm.Name);
                }

                if (binding.IsHttpOutput)
                {
                    http = value.Data?.Http ?? http;
                }
                else if (binding.IsBlob)
                {
                    string key = _templates[binding].Resolve(bindingData, binding.Name);
                    record.Outputs.Add(await StoreBlobAsync(binding, key, value, cancellationToken).ConfigureAwait(false));
                }
            }
        }
        finally
        {
            // The worker closes its handles; with the cache on it leaves the files, which the cache now owns.
            channel.CloseSharedMemory(workerMaps);
        }

        return http;
    }

    private async Task<OutputRecord> StoreBlobAsync(BindingDefinition binding, string key, ParameterBinding value, CancellationToken cancellationToken)
    {
        if (value.RpcSharedMemory is { } shm)
        {
            if (shm.Offset != 0)
            {
                throw new BindingException($"Output '{binding.Name}': a shared-memory region at offset {shm.Offset} cannot be adopted (only whole maps).");
            }

            if (cachelet is not null)
            {
                WriteReceipt receipt = await cachelet.WriteMapAsync(key, shm.Name, cancellationToken).ConfigureAwait(false);
                return new OutputRecord(binding.Name, key, shm.Name, shm.Count, receipt.Cached, receipt.Persisted, receipt.BytesCopied);
            }

            // Cache off: copy the bytes out and upload them; the worker deletes its map on close.
            byte[] bytes = ReadWorkerMap(shm);
            await storage.UploadAsync(key, new MemoryStream(bytes, writable: false), cancellationToken).ConfigureAwait(false);
            return new OutputRecord(binding.Name, key, shm.Name, bytes.Length, false, true, bytes.Length);
        }

        ReadOnlyMemory<byte> data = value.Data.DataCase switch
        {
            TypedData.DataOneofCase.Bytes => value.Data.Bytes.Memory,
            TypedData.DataOneofCase.Stream => value.Data.Stream.Memory,
            TypedData.DataOneofCase.String => System.Text.Encoding.UTF8.GetBytes(value.Data.String),
            TypedData.DataOneofCase.Json => System.Text.Encoding.UTF8.GetBytes(value.Data.Json),
            TypedData.DataOneofCase.None => throw new BindingException($"Output '{binding.Name}' ({key}) got no value."),
            _ => throw new BindingException($"Output '{binding.Name}' ({key}): a {value.Data.DataCase} value cannot be written to a blob (use bytes or a string)."),
        };
        if (cachelet is not null)
        {
            WriteReceipt receipt = await cachelet.WriteAsync(key, data, cancellationToken).ConfigureAwait(false);
            return new OutputRecord(binding.Name, key, null, data.Length, false, receipt.Persisted, receipt.BytesCopied);
        }

        await storage.UploadAsync(key, new MemoryStream(data.ToArray(), writable: false), cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, key, null, data.Length, false, true, data.Length);
    }

    private byte[] ReadWorkerMap(RpcSharedMemory shm)
    {
        using FileStream file = File.OpenRead(Path.Combine(sharedMemory.MapDirectory, Path.GetFileName(shm.Name)));
        file.Seek(SharedMemoryMap.HeaderSize + shm.Offset, SeekOrigin.Begin);
        var bytes = new byte[shm.Count];
        file.ReadExactly(bytes);
        return bytes;
    }

    private static string SourceName(ReadSource source) => source switch
    {
        ReadSource.LocalHit => "lh",
        ReadSource.LocalMiss => "lm",
        ReadSource.RemoteHit => "rh",
        ReadSource.RemoteMiss => "rm",
        ReadSource.StorageFallback => "fallback",
        _ => "bypass",
    };
}
