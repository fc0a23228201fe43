namespace FaaSCache.Testing;

/// <summary>
/// The Python function app that the multi-instance tests and the reliability benchmark run on every host: host.json
/// with a consistency preset and fast membership, and the HTTP functions over one container that they all share
/// (<c>Read</c>: GET <c>?name=</c> with the blob as binary input; <c>Write</c>: POST <c>?name=</c> writing the body).
/// Each caller adds its own functions and its own <c>Read</c> body (what it answers about the blob).
/// </summary>
public static class PythonCacheApp
{
    /// <summary>The heartbeat interval the apps run with: a killed or partitioned instance leaves within seconds.</summary>
    public static readonly TimeSpan HeartbeatInterval = TimeSpan.FromSeconds(1);

    /// <summary>How long a member may be silent before the others remove it.</summary>
    public static readonly TimeSpan FailureTimeout = TimeSpan.FromSeconds(3);

    /// <summary>
    /// A builder with host.json (<paramref name="consistency"/>, fast membership, 100 virtual nodes; §4 bandwidth scaling
    /// on or off) and the Python worker against <c>UseDevelopmentStorage=true</c>.
    /// </summary>
    public static FunctionAppBuilder Create(string namePrefix, string consistency, bool bandwidthScaling = true) => new FunctionAppBuilder { NamePrefix = namePrefix }
        .WithHostJson($$"""
            {
              "version": "2.0",
              "extensions": {
                "faasCache": {
                  "consistency": "{{consistency}}",
                  "membership": { "heartbeatInterval": "{{HeartbeatInterval:c}}", "failureTimeout": "{{FailureTimeout:c}}", "virtualNodes": 100 },
                  "scaling": { "bandwidth": {{(bandwidthScaling ? "true" : "false")}} }
                }
              }
            }
            """)
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
        .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true");

    /// <summary>Adds <c>Read</c> (GET <c>?name=</c>): blob <c>{container}/{name}</c> as <c>data: bytes</c> to <paramref name="pythonMain"/>.</summary>
    public static FunctionAppBuilder WithRead(this FunctionAppBuilder builder, string container, string pythonMain)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.WithFunction("Read", $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
                { "type": "blob", "direction": "in", "name": "data", "path": "{{container}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", pythonMain));
    }

    /// <summary>Adds <c>Write</c> (POST <c>?name=</c>): writes the request body to <c>{container}/{name}</c> and answers its length.</summary>
    public static FunctionAppBuilder WithWrite(this FunctionAppBuilder builder, string container)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.WithFunction("Write", $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "blob", "direction": "out", "name": "blob", "path": "{{container}}/{name}", "connection": "AzureWebJobsStorage" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(req: func.HttpRequest, blob: func.Out[bytes]) -> func.HttpResponse:
                body = req.get_body()
                blob.set(body)
                return func.HttpResponse(str(len(body)))
            """));
    }
}
