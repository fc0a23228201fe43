namespace FaaSCache.Host.AppModel;

/// <summary>One function of the app: a function.json folder, or a function a worker indexed.</summary>
public sealed class FunctionDefinition
{
    private readonly Lazy<IReadOnlyDictionary<string, DeferredBindingDecision>> _deferred;

    /// <summary>Initializes a new instance of the <see cref="FunctionDefinition"/> class.</summary>
    public FunctionDefinition() => _deferred = new(() => DeferredBinding.DecideInputs(this));

    /// <summary>Gets the function name (its folder name, or the name the worker gave).</summary>
    public required string Name { get; init; }

    /// <summary>Gets the folder holding function.json, or the directory the worker gave.</summary>
    public required string Directory { get; init; }

    /// <summary>Gets the script: a full path for function.json functions, as the worker gave it for indexed ones.</summary>
    public required string ScriptFile { get; init; }

    /// <summary>Gets the entry point, or empty for the language default.</summary>
    public required string EntryPoint { get; init; }

    /// <summary>Gets the worker runtime that runs it (<c>python</c>, <c>node</c>, <c>dotnet-isolated</c>).</summary>
    public required string Language { get; init; }

    /// <summary>Gets the bindings in declaration order.</summary>
    public required IReadOnlyList<BindingDefinition> Bindings { get; init; }

    /// <summary>Gets the trigger binding.</summary>
    public BindingDefinition Trigger => Bindings.First(b => b.IsTrigger);

    /// <summary>Gets the id used in the worker protocol: the worker's own for an indexed function (it looks functions up by it).</summary>
    public string FunctionId { get; init; } = Guid.NewGuid().ToString();

    /// <summary>Gets a value indicating whether a worker indexed this function (else it comes from function.json).</summary>
    public bool WorkerIndexed { get; init; }

    /// <summary>Gets the properties the worker returned with the function, sent back in its load request.</summary>
    public IReadOnlyDictionary<string, string> Properties { get; init; } = new Dictionary<string, string>();

    /// <summary>Gets the retry options the worker declared, sent back in its load request.</summary>
    public RpcRetryOptions? RetryOptions { get; init; }

    /// <summary>Gets why the worker could not index this function (its status was Failure): every invocation fails with it.</summary>
    public string? IndexingError { get; init; }

    /// <summary>Gets the HTTP route (<c>route</c> of the trigger, else the function name), for HTTP triggers.</summary>
    public string Route => Trigger.Property("route") is { Length: > 0 } route ? route.Trim('/') : Name;

    /// <summary>Gets the allowed HTTP methods (empty: all).</summary>
    public IReadOnlyList<string> Methods =>
        Trigger.Raw.FirstOrDefault(p => string.Equals(p.Key, "methods", StringComparison.OrdinalIgnoreCase)).Value is System.Text.Json.Nodes.JsonArray methods
            ? methods.Select(m => m is System.Text.Json.Nodes.JsonValue v && v.TryGetValue(out string? s) ? s.ToUpperInvariant() : string.Empty).Where(m => m.Length > 0).ToList()
            : [];

    /// <summary>
    /// Whether blob input <paramref name="binding"/> gets <c>ModelBindingData</c> (an SDK-type parameter) rather than its
    /// bytes, decided once for the function (a C# isolated function's assembly is read on the first call) and kept here.
    /// </summary>
    public DeferredBindingDecision DeferredDecisionOf(BindingDefinition binding)
        => _deferred.Value.TryGetValue(binding.Name, out DeferredBindingDecision decision) ? decision : default;
}
