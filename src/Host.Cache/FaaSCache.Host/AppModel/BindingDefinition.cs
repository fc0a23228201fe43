namespace FaaSCache.Host.AppModel;

/// <summary>Direction of a binding, as function.json says it.</summary>
public enum BindingDirection
{
    /// <summary>Input (or trigger).</summary>
    In,
    /// <summary>Output.</summary>
    Out,
    /// <summary>Both.</summary>
    InOut,
}

/// <summary>One binding: an entry of function.json's <c>bindings</c>, or one of a worker-indexed function's raw bindings.</summary>
public sealed class BindingDefinition
{
    /// <summary>Gets the binding name (<c>$return</c> binds the return value).</summary>
    public required string Name { get; init; }

    /// <summary>Gets the type: <c>httpTrigger</c>, <c>http</c>, <c>blob</c>, <c>blobTrigger</c>, ...</summary>
    public required string Type { get; init; }

    /// <summary>Gets the direction.</summary>
    public required BindingDirection Direction { get; init; }

    /// <summary>Gets the <c>dataType</c> (<c>string</c>, <c>binary</c>, <c>stream</c>, any case), if any.</summary>
    public string? DataType { get; init; }

    /// <summary>Gets the blob path template (<c>container/{name}</c>; <c>path</c>, or <c>blobPath</c> as the .NET SDK writes it), for blob bindings.</summary>
    public string? Path { get; init; }

    /// <summary>Gets the connection setting name (default <c>AzureWebJobsStorage</c>).</summary>
    public string? Connection { get; init; }

    /// <summary>Gets the whole JSON object, for the worker's raw bindings.</summary>
    public required JsonObject Raw { get; init; }

    /// <summary>Gets a value indicating whether this binding is the function's trigger.</summary>
    public bool IsTrigger => Type.EndsWith("Trigger", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether this is a blob input, output or trigger.</summary>
    public bool IsBlob => Type.Equals("blob", StringComparison.OrdinalIgnoreCase) || Type.Equals("blobTrigger", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether this is an HTTP trigger.</summary>
    public bool IsHttpTrigger => Type.Equals("httpTrigger", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether this is an HTTP output.</summary>
    public bool IsHttpOutput => Type.Equals("http", StringComparison.OrdinalIgnoreCase) && Direction == BindingDirection.Out;

    /// <summary>Gets a value indicating whether this is a timer trigger.</summary>
    public bool IsTimerTrigger => Type.Equals("timerTrigger", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether this is a storage queue trigger.</summary>
    public bool IsQueueTrigger => Type.Equals("queueTrigger", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets a value indicating whether this is a storage queue output.</summary>
    public bool IsQueueOutput => Type.Equals("queue", StringComparison.OrdinalIgnoreCase) && Direction != BindingDirection.In;

    /// <summary>
    /// Gets a value indicating whether the worker marked this binding <c>supportsDeferredBinding</c> (in its raw binding's
    /// <c>properties</c>): it can take <c>ModelBindingData</c> for it.
    /// </summary>
    public bool SupportsDeferredBinding
        => Raw["properties"] is JsonObject p && p["supportsDeferredBinding"]?.ToString() is { } d && d.Equals("true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets the queue of a queue trigger or output (<c>queueName</c>), or null.</summary>
    public string? QueueName => Property("queueName");

    /// <summary>Gets a string property of the raw JSON (names compared case-insensitively, as the Functions host does), or null.</summary>
    public string? Property(string name)
        => Raw.FirstOrDefault(p => string.Equals(p.Key, name, StringComparison.OrdinalIgnoreCase)).Value is JsonValue value && value.TryGetValue(out string? s) ? s : null;
}
