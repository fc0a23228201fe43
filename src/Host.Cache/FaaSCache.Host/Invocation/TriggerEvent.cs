namespace FaaSCache.Host.Invocation;

/// <summary>What started an invocation: typed, so that triggers need not know FunctionRpc.</summary>
public abstract record TriggerEvent
{
    /// <summary>Gets the kind for the invocation record: <c>http</c>, <c>cache</c> (a write through the cache), <c>blob</c> (found by polling), <c>timer</c> or <c>queue</c>.</summary>
    public abstract string Kind { get; }

    /// <summary>Gets the values that fill the function's binding path templates (route and query values, blob-name captures).</summary>
    public abstract IReadOnlyDictionary<string, string> BindingData { get; }
}

/// <summary>An HTTP request to <c>/api/&lt;route&gt;</c>.</summary>
/// <param name="Request">The request.</param>
public sealed record HttpTriggerEvent(HttpRequestData Request) : TriggerEvent
{
    /// <inheritdoc />
    public override string Kind => "http";

    /// <inheritdoc />
    public override IReadOnlyDictionary<string, string> BindingData { get; } = Request.BindingData();
}

/// <summary>Where a blob trigger learnt of a write.</summary>
public enum BlobTriggerSource
{
    /// <summary>A write through this instance's cachelet (the paper's cache trigger).</summary>
    Cache,

    /// <summary>A poll of the trigger container found it (a write made by someone else).</summary>
    Poll,

    /// <summary>Storage's <c>BlobCreated</c> event reached the blobs webhook (an Event Grid-sourced trigger).</summary>
    EventGrid,
}

/// <summary>A blob write that fires a blob-triggered function.</summary>
/// <param name="Key">The blob, <c>container/blob</c>.</param>
/// <param name="Version">The write's version (ETag, or the cachelet's version of an asynchronous write).</param>
/// <param name="Source">How the write was seen.</param>
/// <param name="BlobUri">The blob's URI in the storage account.</param>
/// <param name="Captures">The values the trigger path's template captured.</param>
public sealed record BlobTriggerEvent(string Key, string Version, BlobTriggerSource Source, Uri BlobUri, IReadOnlyDictionary<string, string> Captures) : TriggerEvent
{
    /// <inheritdoc />
    public override string Kind => Source switch { BlobTriggerSource.Cache => "cache", BlobTriggerSource.EventGrid => "eventgrid", _ => "blob" };

    /// <inheritdoc />
    public override IReadOnlyDictionary<string, string> BindingData => Captures;
}

/// <summary>A timer trigger's occurrence.</summary>
/// <param name="Scheduled">When it was due.</param>
/// <param name="Next">When it is due next.</param>
/// <param name="Last">When it last ran, if it did since the host started.</param>
/// <param name="IsPastDue">True when it runs later than due (the host was busy or not running).</param>
public sealed record TimerTriggerEvent(DateTimeOffset Scheduled, DateTimeOffset Next, DateTimeOffset? Last, bool IsPastDue) : TriggerEvent
{
    /// <inheritdoc />
    public override string Kind => "timer";

    /// <inheritdoc />
    public override IReadOnlyDictionary<string, string> BindingData { get; } = new Dictionary<string, string>();
}

/// <summary>A storage queue message that fires a queue-triggered function.</summary>
/// <param name="Queue">The queue.</param>
/// <param name="Text">The message, decoded (base64 by default, as the queues extension encodes).</param>
/// <param name="Id">The message id.</param>
/// <param name="DequeueCount">How many times it was received, this time included.</param>
/// <param name="InsertionTime">When it was put in the queue.</param>
/// <param name="ExpirationTime">When it expires.</param>
/// <param name="NextVisibleTime">When it shows again unless deleted.</param>
/// <param name="PopReceipt">The receipt of this receive.</param>
public sealed record QueueTriggerEvent(string Queue, string Text, string Id, long DequeueCount, DateTimeOffset? InsertionTime, DateTimeOffset? ExpirationTime, DateTimeOffset? NextVisibleTime, string PopReceipt) : TriggerEvent
{
    /// <inheritdoc />
    public override string Kind => "queue";

    /// <summary>
    /// Gets what binding expressions resolve from, as the Functions host's queue trigger gives them: <c>{queueTrigger}</c>
    /// (the message), <c>{id}</c>, <c>{dequeueCount}</c>, <c>{popReceipt}</c>, and a JSON object message's top-level
    /// properties (<c>{name}</c> of <c>{"name": "cat.jpg"}</c>).
    /// </summary>
    public override IReadOnlyDictionary<string, string> BindingData { get; } = QueueBindingData(Text, Id, DequeueCount, PopReceipt);

    private static Dictionary<string, string> QueueBindingData(string text, string id, long dequeueCount, string popReceipt)
    {
        var data = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        try
        {
            if (System.Text.Json.Nodes.JsonNode.Parse(text) is System.Text.Json.Nodes.JsonObject json)
            {
                foreach ((string name, System.Text.Json.Nodes.JsonNode? value) in json)
                {
                    if (value is System.Text.Json.Nodes.JsonValue scalar)
                    {
                        data[name] = scalar.TryGetValue(out string? s) ? s : scalar.ToJsonString();
                    }
                }
            }
        }
        catch (System.Text.Json.JsonException)
        {
            // Not JSON: only the message itself binds.
        }

        data["QueueTrigger"] = text;
        data["Id"] = id;
        data["DequeueCount"] = dequeueCount.ToString(System.Globalization.CultureInfo.InvariantCulture);
        data["PopReceipt"] = popReceipt;
        return data;
    }
}

/// <summary>An HTTP request as the trigger sees it.</summary>
/// <param name="Method">The method.</param>
/// <param name="Url">The full URL.</param>
/// <param name="Headers">Headers, names lower-cased.</param>
/// <param name="Query">Query values.</param>
/// <param name="RouteValues">Route parameters.</param>
/// <param name="Body">The body.</param>
/// <param name="ContentType">The content type, if any.</param>
public sealed record HttpRequestData(
    string Method,
    string Url,
    IReadOnlyDictionary<string, string> Headers,
    IReadOnlyDictionary<string, string> Query,
    IReadOnlyDictionary<string, string> RouteValues,
    ReadOnlyMemory<byte> Body,
    string? ContentType)
{
    /// <summary>Query values, then route values on top: what path templates like <c>{name}</c> resolve from.</summary>
    public IReadOnlyDictionary<string, string> BindingData()
    {
        var data = new Dictionary<string, string>(Query, StringComparer.OrdinalIgnoreCase);
        foreach ((string name, string value) in RouteValues)
        {
            data[name] = value;
        }

        return data;
    }
}

/// <summary>The HTTP response a function returned.</summary>
/// <param name="StatusCode">The status code.</param>
/// <param name="Headers">Headers.</param>
/// <param name="Body">The body.</param>
/// <param name="IsJson">True when the function returned JSON (content type application/json unless it set one).</param>
public sealed record HttpResponseData(int StatusCode, IReadOnlyDictionary<string, string> Headers, byte[] Body, bool IsJson);
