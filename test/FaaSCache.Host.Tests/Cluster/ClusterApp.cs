namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// The Python app the cluster tests run on every instance, with a per-test container (<c>data-X</c>) and app name
/// (the membership blob <c>faascache-membership/&lt;name&gt;.json</c>), so tests sharing one Azurite never meet:
/// <list type="bullet">
/// <item><c>Read</c> (GET <c>?name=</c>): reads blob <c>data-X/{name}</c> and answers its size, SHA-256 and first bytes.</item>
/// <item><c>Increment</c> (POST <c>?name=</c>): reads <c>data-X/{name}</c> (a decimal number, 0 when missing) and writes it back plus one.</item>
/// <item><c>Write</c> (POST <c>?name=</c>): writes the request body to <c>data-X/{name}</c>.</item>
/// <item><c>Emit</c> (POST <c>?name=</c>): writes the request body to <c>events-X/{name}</c>, the path of <c>OnEvent</c>.</item>
/// <item><c>OnEvent</c> (blob trigger on <c>events-X/{name}</c>): reads the blob and does nothing else.</item>
/// </list>
/// Membership runs fast: a heartbeat every <see cref="HeartbeatInterval"/>, members silent for <see cref="FailureTimeout"/> removed.
/// </summary>
internal sealed class ClusterApp
{
    public static readonly TimeSpan HeartbeatInterval = PythonCacheApp.HeartbeatInterval;
    public static readonly TimeSpan FailureTimeout = PythonCacheApp.FailureTimeout;

    private ClusterApp(string suffix, string consistency)
    {
        Name = $"cluster-{suffix}";
        Container = $"data-{suffix}";
        Events = $"events-{suffix}";
        Consistency = consistency;
    }

    /// <summary>Gets the app name (<c>--app-name</c>); instance ids are <c>&lt;name&gt;-1..N</c>.</summary>
    public string Name { get; }

    /// <summary>Gets the container the functions read and write.</summary>
    public string Container { get; }

    /// <summary>Gets the container <c>Emit</c> writes to and <c>OnEvent</c> is triggered by.</summary>
    public string Events { get; }

    /// <summary>Gets the consistency preset in host.json.</summary>
    public string Consistency { get; }

    public static ClusterApp Create(string consistency) => new(Guid.NewGuid().ToString("N")[..10], consistency);

    /// <summary>The cache key of blob <paramref name="name"/>.</summary>
    public string Key(string name) => $"{Container}/{name}";

    /// <summary>Writes the app; <paramref name="bandwidthScaling"/> false pins §4's scaled loads off (one instance fetches each miss).</summary>
    public FunctionAppFolder Build(bool bandwidthScaling = true) => PythonCacheApp.Create("faascache-cluster-app", Consistency, bandwidthScaling)
        .WithRead(Container, """
            import hashlib
            import json

            import azure.functions as func


            def main(req: func.HttpRequest, data: bytes) -> func.HttpResponse:
                body = bytes(data)
                answer = {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest(), "head": body[:64].decode("latin-1")}
                return func.HttpResponse(json.dumps(answer), mimetype="application/json")
            """)
        .WithWrite(Container)
        .WithFunction("Increment", $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "blob", "direction": "in", "name": "current", "path": "{{Container}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "blob", "direction": "out", "name": "next", "path": "{{Container}}/{name}", "connection": "AzureWebJobsStorage" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(req: func.HttpRequest, current: bytes, next: func.Out[bytes]) -> func.HttpResponse:
                value = int(bytes(current).decode()) + 1 if current is not None else 1
                next.set(str(value).encode())
                return func.HttpResponse(str(value))
            """))
        .WithFunction("Emit", $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "blob", "direction": "out", "name": "event", "path": "{{Events}}/{name}", "connection": "AzureWebJobsStorage" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(req: func.HttpRequest, event: func.Out[bytes]) -> func.HttpResponse:
                event.set(req.get_body())
                return func.HttpResponse("ok")
            """))
        .WithFunction("OnEvent", $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "type": "blobTrigger", "direction": "in", "name": "event", "path": "{{Events}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" }
              ]
            }
            """, ("__init__.py", """
            def main(event: bytes) -> None:
                assert event is not None
            """))
        .Build();
}
