using System.Text.Json;
using FaaSCache.Host.AppModel;
using FaaSCache.Host.Bindings;
using FaaSCache.Host.Invocation;
using FaaSCache.Host.Workers;

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

        var data = new HttpRequestData(
            request.Method,
            $"{request.Scheme}://{request.Host}{request.Path}{request.QueryString}",
            request.Headers.ToDictionary(h => h.Key.ToLowerInvariant(), h => h.Value.ToString(), StringComparer.Ordinal),
            request.Query.ToDictionary(q => q.Key, q => q.Value.ToString(), StringComparer.Ordinal),
            request.RouteValues.ToDictionary(r => r.Key, r => Convert.ToString(r.Value, System.Globalization.CultureInfo.InvariantCulture) ?? string.Empty, StringComparer.Ordinal),
            body,
            request.ContentType);
        InvocationOutcome outcome;
        try
        {
            outcome = await invoker.InvokeAsync(function, new HttpTriggerEvent(data), context.RequestAborted);
        }
        catch (WorkerStartupFailedException e)
        {
            // No worker for this language, and none coming: say so at once, as a service that is unavailable.
            logger.LogError("{Message}", e.Message);
            await WriteErrorAsync(context, e.Message, StatusCodes.Status503ServiceUnavailable);
            return;
        }
        catch (Exception e) when (e is FaaSCache.Storage.StorageUnavailableException or FaaSCache.Caching.MembershipLeaseLostException)
        {
            // Storage (or the membership it holds) unreachable: the binding's read or write was not done; a retry may succeed.
            logger.LogError("{Message}", e.Message);
            await WriteErrorAsync(context, e.Message, StatusCodes.Status503ServiceUnavailable);
            return;
        }
        catch (Exception e) when (e is FunctionInvocationException or FaaSCache.Caching.WriteOutcomeUnknownException or WorkerFailedException or BindingException or FaaSCache.Storage.BlobNotFoundException
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

    private static async Task WriteResponseAsync(HttpContext context, HttpResponseData? http)
    {
        if (http is null)
        {
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        context.Response.StatusCode = http.StatusCode;
        foreach ((string name, string value) in http.Headers)
        {
            context.Response.Headers[name] = value;
        }

        if (http.IsJson && !context.Response.Headers.ContainsKey("content-type"))
        {
            context.Response.ContentType = "application/json";
        }

        await context.Response.Body.WriteAsync(http.Body, context.RequestAborted);
    }
}
