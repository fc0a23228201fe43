using System.Globalization;
using System.Text;
using System.Text.Json;
using Google.Protobuf;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Invocation;

/// <summary>The one place where trigger events become FunctionRpc data, and FunctionRpc HTTP responses become HTTP.</summary>
internal static class RpcMessages
{
    /// <summary>The trigger's own parameter: the HTTP request, or nothing for a blob trigger (its blob is an input).</summary>
    public static TypedData TriggerData(TriggerEvent trigger) => trigger switch
    {
        HttpTriggerEvent http => new TypedData { Http = ToRpc(http.Request) },
        TimerTriggerEvent timer => new TypedData { Json = TimerInfo(timer) },
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
        }

        return metadata;
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

    private static RpcHttp ToRpc(HttpRequestData request)
    {
        var http = new RpcHttp { Method = request.Method, Url = request.Url };
        foreach ((string name, string value) in request.Headers)
        {
            http.Headers[name] = value;
        }

        foreach ((string name, string value) in request.Query)
        {
            http.Query[name] = value;
        }

        foreach ((string name, string value) in request.RouteValues)
        {
            http.Params[name] = value;
        }
        if (!request.Body.IsEmpty)
        {
            http.Body = IsText(request.ContentType)
                ? new TypedData { String = Encoding.UTF8.GetString(request.Body.Span) }
                : new TypedData { Bytes = ByteString.CopyFrom(request.Body.Span) };
            http.RawBody = http.Body;
        }

        return http;
    }

    private static bool IsText(string? contentType)
        => contentType is not null && (contentType.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("json", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("xml", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase));
}
