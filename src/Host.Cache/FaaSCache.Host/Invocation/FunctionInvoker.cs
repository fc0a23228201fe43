using FaaSCache.Host.Queues;

namespace FaaSCache.Host.Invocation;

/// <summary>What an invocation returned to its trigger.</summary>
/// <param name="Http">The HTTP response, if the function has an HTTP output.</param>
/// <param name="Record">The invocation record.</param>
public sealed record InvocationOutcome(HttpResponseData? Http, InvocationRecord Record);

/// <summary>
/// Runs one invocation: turns the trigger event into the request, binds blob inputs through the host's blob binder
/// (the cache's map as <c>RpcSharedMemory</c>, or bytes when the cache is off or the worker cannot map shared memory),
/// sends it to the function's worker, stores the outputs and releases everything.
/// </summary>
public sealed class FunctionInvoker(
    IBlobBinder blobs,
    HttpProxy proxy,
    IReadOnlyDictionary<string, LanguageWorkerManager> workers,
    InvocationLog log,
    ILogger<FunctionInvoker> logger,
    FaaSCache.Scaling.InvocationMeter? meter = null,
    ResultCaching.ResultCache? results = null,
    Queues.StorageQueues? queues = null)
{
    /// <summary>The worker capability that says it reads inputs from, and writes outputs to, shared memory.</summary>
    public const string SharedMemoryCapability = "SharedMemoryDataTransfer";

    private readonly ConcurrentDictionary<BindingDefinition, BindingTemplate> _templates = new();

    /// <summary>
    /// A worker that cannot turn a blob input into the parameter's type says so; the host adds why: an SDK-type
    /// parameter (<c>Stream</c>, <c>BlobClient</c>) gets ModelBindingData only when the host could read its type from the
    /// function's assembly (<see cref="DeferredBinding"/>), and bytes otherwise; the hint names what could not be read.
    /// </summary>
    internal static string DeferredBindingHint(FunctionDefinition function, string error)
        => error.Contains("Cannot convert input parameter", StringComparison.Ordinal)
           && function.Bindings.Where(b => b.IsBlob && b.Direction == BindingDirection.In).Select(b => (b.Name, function.DeferredDecisionOf(b).Error)).FirstOrDefault(d => d.Error is not null) is ({ } name, { } why)
            ? $" (this host sent blob input '{name}' as bytes because it could not read the parameter's type from the function's assembly next to functions.metadata: {why}"
              + "; SDK types such as Stream, BlobClient and BlockBlobClient need ModelBindingData: bind byte[], string or a JSON type, or keep the assembly beside functions.metadata)"
            : string.Empty;

    /// <summary>The W3C traceparent of the current activity (the HTTP request's), or a new one.</summary>
    private static string TraceParent()
        => Activity.Current is { IdFormat: ActivityIdFormat.W3C } activity
            ? activity.Id!
            : $"00-{ActivityTraceId.CreateRandom().ToHexString()}-{ActivitySpanId.CreateRandom().ToHexString()}-00";

    /// <summary>Waits for a forwarded request that was cancelled, so its failure is observed.</summary>
    private static async Task ObserveAsync(Task? task)
    {
        if (task is null)
        {
            return;
        }

        try
        {
            await task.ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or HttpRequestException)
        {
        }
    }

    /// <summary>Gets the template of a blob binding (functions may be indexed after the host starts).</summary>
    public BindingTemplate TemplateOf(BindingDefinition binding) => _templates.GetOrAdd(binding, b => new BindingTemplate(b.Path!));

    /// <summary>Invokes <paramref name="function"/> for <paramref name="trigger"/>.</summary>
    public async Task<InvocationOutcome> InvokeAsync(FunctionDefinition function, TriggerEvent trigger, CancellationToken cancellationToken)
    {
        var record = new InvocationRecord { InvocationId = Guid.NewGuid().ToString(), Function = function.Name, Trigger = trigger.Kind };
        var clock = Stopwatch.StartNew();
        var holds = new List<IDisposable>();
        LanguageWorkerManager manager = workers[function.Language];
        using FaaSCache.Scaling.InvocationMeter.Invocation? metered = meter?.Start();
        try
        {
            // Result caching: a kept answer for the same key parts and input versions answers without the worker.
            ResultCaching.ResultLookup? lookup = results is null
                ? null
                : await results.LookupAsync(function, trigger, b => TemplateOf(b).Resolve(trigger.BindingData, b.Name), cancellationToken).ConfigureAwait(false);
            record.ResultFrom = lookup?.From;
            if (lookup?.Hit is { } kept)
            {
                record.Result = "hit";
                record.Status = "succeeded";
                return new InvocationOutcome(kept, record);
            }

            record.Result = lookup is null ? null : "miss";
            try
            {
                InvocationOutcome outcome = await RunAsync(function, trigger, manager, record, holds, cancellationToken).ConfigureAwait(false);
                if (lookup is not null)
                {
                    await results!.StoreAsync(lookup, outcome.Http, cancellationToken).ConfigureAwait(false);
                }

                return outcome;
            }
            finally
            {
                results?.Finish(lookup);
            }
        }
        catch (Exception e)
        {
            metered?.Fail();
            record.Status = "failed";
            record.Error = e.Message;
            throw;
        }
        finally
        {
            holds.ForEach(h => h.Dispose());
            record.DurationMs = clock.Elapsed.TotalMilliseconds;
            log.Add(record);
        }
    }

    /// <summary>Runs the invocation on the function's worker: binds the inputs, invokes, stores the outputs.</summary>
    private async Task<InvocationOutcome> RunAsync(FunctionDefinition function, TriggerEvent trigger, LanguageWorkerManager manager, InvocationRecord record, List<IDisposable> holds, CancellationToken cancellationToken)
    {
        // A language whose worker cannot start fails at once, before any input is read.
        manager.ThrowIfUnavailable();
        WorkerChannel channel = await manager.GetReadyChannelAsync(cancellationToken).ConfigureAwait(false);
        bool workerMaps = channel.ReadsSharedMemory;
        var request = new InvocationRequest
        {
            InvocationId = record.InvocationId,
            FunctionId = function.FunctionId,
            // Always set, as the Functions host does: the .NET isolated worker reads it unconditionally.
            TraceContext = new RpcTraceContext { TraceParent = TraceParent(), TraceState = Activity.Current?.TraceStateString ?? string.Empty },
        };
        request.TriggerMetadata.Add(RpcMessages.Metadata(trigger));
        // The trigger first, then the other inputs in declaration order, as the Functions host sends them.
        foreach (BindingDefinition binding in function.Bindings.Where(b => b.Direction != BindingDirection.Out).OrderBy(b => b.IsTrigger ? 0 : 1))
        {
            if (binding.IsTrigger && !binding.IsBlob)
            {
                request.InputData.Add(new ParameterBinding { Name = binding.Name, Data = RpcMessages.TriggerData(trigger, channel.WorkerCapabilities) });
            }
            else if (binding.IsBlob)
            {
                string key = binding.IsTrigger && trigger is BlobTriggerEvent blob ? blob.Key : TemplateOf(binding).Resolve(trigger.BindingData, binding.Name);
                request.InputData.Add(await BindInputAsync(binding, key, workerMaps, function.DeferredDecisionOf(binding).Deferred, record, holds, cancellationToken).ConfigureAwait(false));
            }
        }

        // A worker that serves HTTP itself gets the request forwarded, then the invocation (the Functions host's order).
        using var forwarding = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task<HttpResponseData>? proxied = trigger is HttpTriggerEvent httpTrigger && HttpProxy.WorkerAddress(channel.WorkerCapabilities) is { } workerHttp
            ? proxy.ForwardAsync(workerHttp, httpTrigger.Request, record.InvocationId, forwarding.Token)
            : null;
        InvocationResponse response;
        try
        {
            response = await channel.InvokeAsync(request, function, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await forwarding.CancelAsync().ConfigureAwait(false);
            await ObserveAsync(proxied).ConfigureAwait(false);
            throw;
        }

        if (response.Result?.Status != StatusResult.Types.Status.Success)
        {
            await forwarding.CancelAsync().ConfigureAwait(false);
            await ObserveAsync(proxied).ConfigureAwait(false);
            string why = response.Result?.Exception?.Message is { Length: > 0 } m ? m : response.Result?.Result ?? "no result";
            throw new FunctionInvocationException($"Function '{function.Name}' (invocation {record.InvocationId}) failed: {why}{DeferredBindingHint(function, why)}");
        }

        RpcHttp? http = await StoreOutputsAsync(function, response, trigger.BindingData, record, channel, cancellationToken).ConfigureAwait(false);
        record.Status = "succeeded";
        if (proxied is not null)
        {
            return new InvocationOutcome(await proxied.ConfigureAwait(false), record);
        }

        return new InvocationOutcome(http is null ? null : RpcMessages.FromRpc(http), record);
    }

    private async Task<ParameterBinding> BindInputAsync(BindingDefinition binding, string key, bool workerMaps, bool deferred, InvocationRecord record, List<IDisposable> holds, CancellationToken cancellationToken)
    {
        try
        {
            BoundInput bound = deferred
                ? await blobs.BindDeferredAsync(binding, key, cancellationToken).ConfigureAwait(false)
                : await blobs.BindInputAsync(binding, key, workerMaps, cancellationToken).ConfigureAwait(false);
            if (bound.Hold is { } hold)
            {
                holds.Add(hold);
            }

            record.Inputs.Add(bound.Record);
            return bound.Binding;
        }
        catch (BlobNotFoundException)
        {
            // As in Azure Functions, a missing input blob binds as null.
            logger.LogWarning("Input blob {Key} of binding '{Binding}' does not exist; the function gets null", key, binding.Name);
            record.Inputs.Add(new InputRecord(binding.Name, key, "missing", null, 0, 0));
            return new ParameterBinding { Name = binding.Name, Data = new TypedData() };
        }
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
        var workerMaps = new OutputMaps(channel);
        var values = response.OutputData.ToList();
        if (response.ReturnValue is { } returned && returned.DataCase != TypedData.DataOneofCase.None)
        {
            values.Add(new ParameterBinding { Name = "$return", Data = returned });
        }

        var unstored = new HashSet<string>(values.Where(v => v.RpcSharedMemory is not null).Select(v => v.RpcSharedMemory.Name), StringComparer.Ordinal);
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

                if (binding.IsHttpOutput)
                {
                    http = value.Data?.Http ?? http;
                }
                else if (binding.IsBlob)
                {
                    string key = TemplateOf(binding).Resolve(bindingData, binding.Name);
                    if (value.RpcSharedMemory is { } shm)
                    {
                        unstored.Remove(shm.Name);
                    }

                    record.Outputs.Add(await blobs.StoreOutputAsync(binding, key, value, workerMaps, cancellationToken).ConfigureAwait(false));
                }
                else if (binding.IsQueueOutput)
                {
                    record.Outputs.Add(await SendToQueueAsync(function, binding, value.Data, bindingData, cancellationToken).ConfigureAwait(false));
                }
            }
        }
        finally
        {
            // The worker closes what it still holds; with the cache on it leaves the files, which the cache now owns, or
            // which are deleted as soon as nobody holds them (those nothing stored).
            channel.CloseSharedMemory(values.Where(v => v.RpcSharedMemory is not null).Select(v => v.RpcSharedMemory.Name).Where(n => !workerMaps.Closed.Contains(n)));
            foreach (string name in unstored)
            {
                blobs.DiscardOutputMap(name);
            }
        }

        return http;
    }

    /// <summary>A queue output's messages, sent as the queues extension sends them (base64 by default); its record names the queue.</summary>
    private async Task<OutputRecord> SendToQueueAsync(FunctionDefinition function, BindingDefinition binding, TypedData? data, IReadOnlyDictionary<string, string> bindingData, CancellationToken cancellationToken)
    {
        StorageQueues sender = queues ?? throw new InvalidOperationException($"Function '{function.Name}' has a queue output '{binding.Name}', but this host has no queue service.");
        IReadOnlyList<string> messages;
        try
        {
            messages = RpcMessages.QueueMessages(data);
        }
        catch (Exception e) when (e is FormatException or System.Text.Json.JsonException)
        {
            throw new FunctionInvocationException($"Function '{function.Name}' returned a value for queue output '{binding.Name}' that is no message: {e.Message}");
        }

        string queue = sender.QueueNameOf(binding, bindingData);
        await sender.SendAsync(sender.ConnectionOf(binding), queue, messages, cancellationToken).ConfigureAwait(false);
        return new OutputRecord(binding.Name, $"queue:{queue}", null, messages.Sum(m => (long)System.Text.Encoding.UTF8.GetByteCount(m)), Adopted: false, Persisted: true, BytesCopied: 0);
    }

    /// <summary>Closes an output map the worker still holds, once, and remembers it so the final close does not repeat it.</summary>
    private sealed class OutputMaps(WorkerChannel channel) : IWorkerOutputMaps
    {
        /// <summary>How long the worker has to answer a close (the real Python worker answers in well under a millisecond).</summary>
        private static readonly TimeSpan CloseTimeout = TimeSpan.FromSeconds(2);

        public HashSet<string> Closed { get; } = new(StringComparer.Ordinal);

        public int ProcessId => channel.ProcessId;

        public async Task<bool> CloseAsync(string mapName, CancellationToken cancellationToken)
        {
            Closed.Add(mapName);
            IReadOnlyDictionary<string, bool> answers = await channel.CloseSharedMemoryAsync([mapName], CloseTimeout, cancellationToken).ConfigureAwait(false);
            return answers.TryGetValue(mapName, out bool closed) && closed;
        }
    }
}
