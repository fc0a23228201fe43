namespace FaaSCache.Testing;

/// <summary>
/// A Node.js function app of anonymous HTTP functions that wait <c>?ms=</c> milliseconds before they answer: load whose
/// cost is time, not CPU, as the scale controller's tests and the compute-scaling benchmark put on it.
/// </summary>
public static class NodeHttpApp
{
    /// <summary>A builder with the Node.js worker (and no storage: the functions bind none).</summary>
    public static FunctionAppBuilder Create(string namePrefix) => new FunctionAppBuilder { NamePrefix = namePrefix }
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", "node");

    /// <summary>
    /// Adds <paramref name="name"/>, GET <c>/api/{route}</c>: waits <c>?ms=</c> milliseconds (not at all without it), then
    /// answers 200 with the JavaScript expression <paramref name="body"/> (which may use <c>ms</c>).
    /// </summary>
    public static FunctionAppBuilder WithWaitingFunction(this FunctionAppBuilder builder, string name, string route, string body)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.WithFunction(name, $$"""
            { "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"], "route": "{{route}}" },
                { "type": "http", "direction": "out", "name": "res" } ] }
            """, ("index.js", $$"""
            module.exports = async function (context, req) {
                const ms = parseInt(req.query.ms || '0', 10);
                if (ms > 0) {
                    await new Promise(resolve => setTimeout(resolve, ms));
                }
                context.res = { status: 200, body: {{body}} };
            };
            """));
    }
}
