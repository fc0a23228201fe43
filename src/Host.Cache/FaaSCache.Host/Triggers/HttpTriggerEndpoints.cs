using Microsoft.AspNetCore.Routing.Patterns;

namespace FaaSCache.Host.Triggers;

/// <summary>
/// Serves HTTP-triggered functions on <c>/&lt;routePrefix&gt;/&lt;route&gt;</c> (host.json <c>extensions.http.routePrefix</c>,
/// default <c>api</c>), as Core Tools does. The routes are published once the app's functions are known, which for a
/// worker-indexed app is after its worker answered (<see cref="FunctionApp.Indexed"/>).
/// </summary>
public static class HttpTriggerEndpoints
{
    /// <summary>Adds the data source of the HTTP-triggered functions' endpoints; it fills once the app is indexed.</summary>
    public static void Map(IEndpointRouteBuilder web, FunctionApp app, FunctionInvoker invoker, KeyAuthorizer keys, ILoggerFactory loggers)
    {
        var source = new FunctionEndpointDataSource();
        web.DataSources.Add(source);
        app.OnIndexed(functions => source.Publish(functions.Where(f => f.Trigger.IsHttpTrigger).Select(f => Endpoint(app, f, invoker, keys, loggers.CreateLogger($"Function.{f.Name}")))));
    }

    private static RouteEndpoint Endpoint(FunctionApp app, FunctionDefinition function, FunctionInvoker invoker, KeyAuthorizer keys, ILogger logger)
    {
        string pattern = "/" + string.Join('/', new[] { app.RoutePrefix, function.Route }.Where(p => p.Length > 0));
        string? levelText = function.Trigger.Property("authLevel");
        AuthLevel? level = AuthLevels.Parse(levelText);
        if (level is null)
        {
            logger.LogError("Function '{Function}': authLevel '{Value}' is not one of {Allowed}; every request to it is refused", function.Name, levelText, AuthLevels.Allowed);
        }

        RequestDelegate handle = level is { } known
            ? c => AuthorizedAsync(c, known, function, invoker, keys, logger)
            : c => InvocationErrors.WriteAsync(c, $"Function '{function.Name}': authLevel '{levelText}' is not one of {AuthLevels.Allowed}.");
        var builder = new RouteEndpointBuilder(handle, RoutePatternFactory.Parse(pattern), order: 0) { DisplayName = function.Name };
        if (function.Methods.Count > 0)
        {
            builder.Metadata.Add(new HttpMethodMetadata(function.Methods));
        }

        builder.Metadata.Add(new EndpointNameMetadata(function.Name));
        return (RouteEndpoint)builder.Build();
    }

    // As the Functions host: a missing or wrong key is 401 with no body, whatever the level.
    private static Task AuthorizedAsync(HttpContext context, AuthLevel level, FunctionDefinition function, FunctionInvoker invoker, KeyAuthorizer keys, ILogger logger)
    {
        if (keys.CheckFunction(context.Request, level, function.Name) != KeyCheck.Allowed)
        {
            context.Response.StatusCode = StatusCodes.Status401Unauthorized;
            return Task.CompletedTask;
        }

        return HandleAsync(context, function, invoker, logger);
    }

    private static async Task HandleAsync(HttpContext context, FunctionDefinition function, FunctionInvoker invoker, ILogger logger)
    {
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
        catch (Exception e) when (InvocationErrors.StatusOf(e) is { } status)
        {
            logger.LogError("{Message}", e.Message);
            await InvocationErrors.WriteAsync(context, e.Message, status);
            return;
        }

        await WriteResponseAsync(context, outcome.Http);
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
