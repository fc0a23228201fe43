namespace FaaSCache.Host.Invocation;

/// <summary>The one place where trigger events become FunctionRpc data, and FunctionRpc HTTP responses become HTTP.</summary>
internal static class RpcMessages
{
    /// <summary>
    /// The trigger's own parameter: the HTTP request (shaped by the worker's capabilities, as the Functions host does), the
    /// timer's info, or nothing for a blob trigger (its blob is an input).
    /// </summary>
    public static TypedData TriggerData(TriggerEvent trigger, IReadOnlyDictionary<string, string> workerCapabilities) => trigger switch
    {
        HttpTriggerEvent http => new TypedData { Http = ToRpc(http.Request, workerCapabilities) },
        TimerTriggerEvent timer => new TypedData { Json = TimerInfo(timer) },
        // The message as a string, as the Functions host sends it (the Python library takes string or bytes only; the
        // Node.js workers parse a string that is JSON).
        QueueTriggerEvent queue => new TypedData { String = queue.Text },
        _ => new TypedData(),
    };

    /// <summary>The timer's argument as the Functions host serializes TimerInfo (what <c>func.TimerRequest</c> and Node's <c>Timer</c> read).</summary>
    private static string TimerInfo(TimerTriggerEvent timer) => JsonSerializer.Serialize(new Dictionary<string, object?>
    {
        ["Schedule"] = new Dictionary<string, object?> { ["AdjustForDST"] = true },
        ["ScheduleStatus"] = new Dictionary<string, object?>
        {
            ["Last"] = (timer.Last ?? DateTimeOffset.MinValue).ToString("O", CultureInfo.InvariantCulture),
            ["Next"] = timer.Next.ToString("O", CultureInfo.InvariantCulture),
            ["LastUpdated"] = timer.Scheduled.ToString("O", CultureInfo.InvariantCulture),
        },
        ["IsPastDue"] = timer.IsPastDue,
    });

    /// <summary>The trigger metadata the worker gets, as the real host sends it.</summary>
    public static Dictionary<string, TypedData> Metadata(TriggerEvent trigger)
    {
        var metadata = new Dictionary<string, TypedData>(StringComparer.Ordinal);
        switch (trigger)
        {
            case HttpTriggerEvent http:
                foreach ((string name, string value) in http.Request.RouteValues)
                {
                    metadata[name] = new TypedData { String = value };
                }

                metadata["Query"] = new TypedData { Json = JsonSerializer.Serialize(http.Request.Query) };
                metadata["Headers"] = new TypedData { Json = JsonSerializer.Serialize(http.Request.Headers) };
                break;
            case BlobTriggerEvent blob:
                metadata["BlobTrigger"] = new TypedData { String = blob.Key };
                metadata["Uri"] = new TypedData { String = blob.BlobUri.ToString() };
                metadata["Properties"] = new TypedData { Json = JsonSerializer.Serialize(new { ETag = blob.Version }) };
                foreach ((string name, string value) in blob.Captures)
                {
                    metadata[name] = new TypedData { String = value };
                }

                break;
            case QueueTriggerEvent queue:
                // The names and types the Functions host sends (what func.QueueMessage, the Node.js library and the .NET
                // isolated worker read): strings as strings, everything else as JSON (the count "1", the times "\"...\"");
                // the .NET isolated worker refuses a TypedData Int in metadata ("Int is not supported").
                metadata["QueueTrigger"] = new TypedData { String = queue.Text };
                metadata["Id"] = new TypedData { String = queue.Id };
                metadata["DequeueCount"] = new TypedData { Json = queue.DequeueCount.ToString(CultureInfo.InvariantCulture) };
                metadata["PopReceipt"] = new TypedData { String = queue.PopReceipt };
                AddTime(metadata, "InsertionTime", queue.InsertionTime);
                AddTime(metadata, "ExpirationTime", queue.ExpirationTime);
                AddTime(metadata, "NextVisibleTime", queue.NextVisibleTime);
                break;
        }

        return metadata;
    }

    private static void AddTime(Dictionary<string, TypedData> metadata, string name, DateTimeOffset? time)
    {
        if (time is { } t)
        {
            metadata[name] = new TypedData { Json = JsonSerializer.Serialize(t) };
        }
    }

    /// <summary>
    /// The messages a function's queue output returned, as the Functions host turns them into queue messages: a string or
    /// bytes is one message, a JSON array one message per element (a string element as its text, anything else as its
    /// JSON), other JSON one message of that JSON; collections one message per item; nothing for no value.
    /// </summary>
    public static IReadOnlyList<string> QueueMessages(TypedData? data)
    {
        switch (data?.DataCase)
        {
            case null or TypedData.DataOneofCase.None:
                return [];
            case TypedData.DataOneofCase.String:
                return [data.String];
            case TypedData.DataOneofCase.Bytes:
                return [Encoding.UTF8.GetString(data.Bytes.Span)];
            case TypedData.DataOneofCase.Int:
                return [data.Int.ToString(CultureInfo.InvariantCulture)];
            case TypedData.DataOneofCase.Double:
                return [data.Double.ToString(CultureInfo.InvariantCulture)];
            case TypedData.DataOneofCase.CollectionString:
                return [.. data.CollectionString.String];
            case TypedData.DataOneofCase.CollectionBytes:
                return [.. data.CollectionBytes.Bytes.Select(b => Encoding.UTF8.GetString(b.Span))];
            case TypedData.DataOneofCase.Json:
                System.Text.Json.Nodes.JsonNode? json = System.Text.Json.Nodes.JsonNode.Parse(data.Json);
                return json switch
                {
                    null => [],
                    System.Text.Json.Nodes.JsonArray array => [.. array.Where(e => e is not null).Select(e => e is System.Text.Json.Nodes.JsonValue v && v.TryGetValue(out string? text) ? text : e!.ToJsonString())],
                    System.Text.Json.Nodes.JsonValue v when v.TryGetValue(out string? text) => [text],
                    _ => [json.ToJsonString()],
                };
            default:
                throw new FormatException($"a queue output cannot take a value of type {data.DataCase}");
        }
    }

    /// <summary>The HTTP response of a function's <c>http</c> output.</summary>
    public static HttpResponseData FromRpc(RpcHttp http)
    {
        byte[] body = http.Body?.DataCase switch
        {
            TypedData.DataOneofCase.String => Encoding.UTF8.GetBytes(http.Body.String),
            TypedData.DataOneofCase.Json => Encoding.UTF8.GetBytes(http.Body.Json),
            TypedData.DataOneofCase.Bytes => http.Body.Bytes.ToByteArray(),
            TypedData.DataOneofCase.Stream => http.Body.Stream.ToByteArray(),
            TypedData.DataOneofCase.Int => Encoding.UTF8.GetBytes(http.Body.Int.ToString(CultureInfo.InvariantCulture)),
            TypedData.DataOneofCase.Double => Encoding.UTF8.GetBytes(http.Body.Double.ToString(CultureInfo.InvariantCulture)),
            _ => [],
        };
        int status = int.TryParse(http.StatusCode, NumberStyles.None, CultureInfo.InvariantCulture, out int code) ? code : 200;
        return new HttpResponseData(status, new Dictionary<string, string>(http.Headers), body, http.Body?.DataCase == TypedData.DataOneofCase.Json);
    }

    /// <summary>
    /// The request as RpcHttp. The worker's capabilities decide the details, as with the Functions host:
    /// <c>UseNullableValueDictionaryForHttp</c> adds the nullable header/query/route maps (the .NET isolated and Node.js
    /// workers read those), <c>IgnoreEmptyValuedRpcHttpHeaders</c> leaves out empty headers, <c>RpcHttpBodyOnly</c> leaves
    /// out the raw body, and <c>RawHttpBodyBytes</c> sends the raw body as bytes.
    /// </summary>
    private static RpcHttp ToRpc(HttpRequestData request, IReadOnlyDictionary<string, string> capabilities)
    {
        bool nullable = Has(capabilities, "UseNullableValueDictionaryForHttp");
        bool skipEmptyHeaders = Has(capabilities, "IgnoreEmptyValuedRpcHttpHeaders");
        var http = new RpcHttp { Method = request.Method, Url = request.Url };
        foreach ((string name, string value) in request.Headers)
        {
            if (skipEmptyHeaders && value.Length == 0)
            {
                continue;
            }

            http.Headers[name] = value;
            if (nullable)
            {
                http.NullableHeaders[name] = new NullableString { Value = value };
            }
        }

        foreach ((string name, string value) in request.Query)
        {
            http.Query[name] = value;
            if (nullable)
            {
                http.NullableQuery[name] = new NullableString { Value = value };
            }
        }

        foreach ((string name, string value) in request.RouteValues)
        {
            http.Params[name] = value;
            if (nullable)
            {
                http.NullableParams[name] = new NullableString { Value = value };
            }
        }

        // A worker that serves HTTP itself (HttpUri) gets the request forwarded: the invocation's RpcHttp carries no body.
        if (!request.Body.IsEmpty && !capabilities.ContainsKey(HttpProxy.HttpUriCapability))
        {
            http.Body = IsText(request.ContentType)
                ? new TypedData { String = Encoding.UTF8.GetString(request.Body.Span) }
                : new TypedData { Bytes = ByteString.CopyFrom(request.Body.Span) };
            if (!Has(capabilities, "RpcHttpBodyOnly"))
            {
                http.RawBody = Has(capabilities, "RawHttpBodyBytes") ? new TypedData { Bytes = ByteString.CopyFrom(request.Body.Span) } : http.Body;
            }
        }

        return http;
    }

    private static bool Has(IReadOnlyDictionary<string, string> capabilities, string name)
        => capabilities.TryGetValue(name, out string? value) && string.Equals(value, "true", StringComparison.OrdinalIgnoreCase);

    private static bool IsText(string? contentType)
        => contentType is not null && (contentType.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("json", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("xml", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase));
}
