using System.Text;
using System.Text.Json;
using FaaSCache.Host.AppModel;
using FaaSCache.Host.Bindings;
using FaaSCache.Host.Invocation;
using FaaSCache.Host.Workers;
using Google.Protobuf;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Triggers;

/// <summary>Serves HTTP-triggered functions on <c>/api/&lt;route&gt;</c>, as Core Tools does.</summary>
public static class HttpTriggerEndpoints
{
    private const int MaxErrorLength = 4000;

    /// <summary>Maps one endpoint per HTTP-triggered function.</summary>
    public static void Map(WebApplication web, FunctionApp app)
    {
        foreach (FunctionDefinition function in app.Functions.Where(f => f.Trigger.IsHttpTrigger))
        {
            string pattern = "/api/" + function.Route;
            IEndpointConventionBuilder route = function.Methods.Count > 0
                ? web.MapMethods(pattern, function.Methods, (HttpContext c) => HandleAsync(c, function))
                : web.Map(pattern, (HttpContext c) => HandleAsync(c, function));
            route.WithName(function.Name);
        }
    }

    private static async Task HandleAsync(HttpContext context, FunctionDefinition function)
    {
        FunctionInvoker invoker = context.RequestServices.GetRequiredService<FunctionInvoker>();
        ILogger logger = context.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger($"Function.{function.Name}");
        HttpRequest request = context.Request;
        byte[] body;
        using (var buffer = new MemoryStream())
        {
            await request.Body.CopyToAsync(buffer, context.RequestAborted);
            body = buffer.ToArray();
        }

        var http = new RpcHttp { Method = request.Method, Url = $"{request.Scheme}://{request.Host}{request.Path}{request.QueryString}" };
        var bindingData = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        var metadata = new Dictionary<string, TypedData>(StringComparer.Ordinal);
        foreach ((string name, Microsoft.Extensions.Primitives.StringValues values) in request.Headers)
        {
            http.Headers[name.ToLowerInvariant()] = values.ToString();
        }

        foreach ((string name, Microsoft.Extensions.Primitives.StringValues values) in request.Query)
        {
            http.Query[name] = values.ToString();
            bindingData[name] = values.ToString();
        }

        foreach ((string name, object? value) in request.RouteValues)
        {
            string text = Convert.ToString(value, System.Globalization.CultureInfo.InvariantCulture) ?? string.Empty;
            http.Params[name] = text;
            bindingData[name] = text;
            metadata[name] = new TypedData { String = text };
        }

        if (body.Length > 0)
        {
            bool text = IsText(request.ContentType);
            http.Body = text ? new TypedData { String = Encoding.UTF8.GetString(body) } : new TypedData { Bytes = ByteString.CopyFrom(body) };
            http.RawBody = http.Body;
        }

        metadata["Query"] = new TypedData { Json = JsonSerializer.Serialize(http.Query) };
        metadata["Headers"] = new TypedData { Json = JsonSerializer.Serialize(http.Headers) };
        InvocationOutcome outcome;
        try
        {
            outcome = await invoker.InvokeAsync(function, new TypedData { Http = http }, null, "http", bindingData, metadata, context.RequestAborted);
        }
        catch (WorkerStartupFailedException e)
        {
            // No worker for this language, and none coming: say so at once, as a service that is unavailable.
            logger.LogError("{Message}", e.Message);
            await WriteErrorAsync(context, e.Message, StatusCodes.Status503ServiceUnavailable);
            return;
        }
        catch (Exception e) when (e is FunctionInvocationException or WorkerFailedException or BindingException or FaaSCache.Storage.BlobNotFoundException
                                      or FaaSCache.Caching.CacheCapacityException or FaaSCache.SharedMemory.SharedMemoryException)
        {
            logger.LogError("{Message}", e.Message);
            await WriteErrorAsync(context, e.Message);
            return;
        }

        await WriteResponseAsync(context, outcome.Http);
    }

    private static async Task WriteErrorAsync(HttpContext context, string message, int status = StatusCodes.Status500InternalServerError)
    {
        context.Response.StatusCode = status;
        context.Response.ContentType = "application/json";
        string trimmed = message.Length > MaxErrorLength ? message[..MaxErrorLength] : message;
        await context.Response.WriteAsync(JsonSerializer.Serialize(new { error = trimmed }), context.RequestAborted);
    }

    private static async Task WriteResponseAsync(HttpContext context, RpcHttp? http)
    {
        if (http is null)
        {
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        context.Response.StatusCode = int.TryParse(http.StatusCode, out int status) ? status : StatusCodes.Status200OK;
        foreach ((string name, string value) in http.Headers)
        {
            context.Response.Headers[name] = value;
        }

        byte[] payload = http.Body?.DataCase switch
        {
            TypedData.DataOneofCase.String => Encoding.UTF8.GetBytes(http.Body.String),
            TypedData.DataOneofCase.Json => Encoding.UTF8.GetBytes(http.Body.Json),
            TypedData.DataOneofCase.Bytes => http.Body.Bytes.ToByteArray(),
            TypedData.DataOneofCase.Stream => http.Body.Stream.ToByteArray(),
            TypedData.DataOneofCase.Int => Encoding.UTF8.GetBytes(http.Body.Int.ToString(System.Globalization.CultureInfo.InvariantCulture)),
            TypedData.DataOneofCase.Double => Encoding.UTF8.GetBytes(http.Body.Double.ToString(System.Globalization.CultureInfo.InvariantCulture)),
            _ => [],
        };
        if (http.Body?.DataCase == TypedData.DataOneofCase.Json && !context.Response.Headers.ContainsKey("content-type"))
        {
            context.Response.ContentType = "application/json";
        }

        await context.Response.Body.WriteAsync(payload, context.RequestAborted);
    }

    private static bool IsText(string? contentType)
        => contentType is not null && (contentType.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("json", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("xml", StringComparison.OrdinalIgnoreCase)
            || contentType.Contains("x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase));
}
