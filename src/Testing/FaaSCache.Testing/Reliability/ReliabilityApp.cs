
namespace FaaSCache.Testing;

/// <summary>
/// The Python app of the reliability suite, one container per run (<c>reg-X</c>):
/// <list type="bullet">
/// <item><c>Read</c> (GET <c>?name=</c>): reads blob <c>reg-X/{name}</c>, whose first line names the value and the
/// length and SHA-256 of the rest; answers the value and whether the body is intact (a partial or mixed object is not).</item>
/// <item><c>Write</c> (POST <c>?name=</c>): writes the request body to <c>reg-X/{name}</c>.</item>
/// <item><c>Slow</c> (POST <c>?ms=</c>): sleeps, so a test can kill the worker in the middle of an invocation.</item>
/// </list>
/// Membership runs fast (heartbeat 1 s, failure timeout 3 s) so that a killed or partitioned instance leaves quickly.
/// </summary>
public static class ReliabilityApp
{
    /// <summary>Builds the app for <paramref name="container"/> under <paramref name="preset"/>.</summary>
    public static FunctionAppFolder Build(string container, string preset) => PythonCacheApp.Create("faascache-reliability-app", preset)
        .WithRead(container, """
            import hashlib
            import json

            import azure.functions as func


            def main(req: func.HttpRequest, data: bytes) -> func.HttpResponse:
                if data is None:
                    return func.HttpResponse(json.dumps({"value": None, "intact": True}), mimetype="application/json")
                body = bytes(data)
                head, _, rest = body.partition(b"\n")
                parts = head.decode("latin-1").split(" ")
                intact = len(parts) == 3 and parts[1] == str(len(rest)) and parts[2] == hashlib.sha256(rest).hexdigest()
                answer = {"value": parts[0], "intact": intact, "bytes": len(body)}
                return func.HttpResponse(json.dumps(answer), mimetype="application/json")
            """)
        .WithWrite(container)
        .WithFunction("Slow", """
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import time

            import azure.functions as func


            def main(req: func.HttpRequest) -> func.HttpResponse:
                time.sleep(int(req.params.get("ms", "1000")) / 1000)
                return func.HttpResponse("slept")
            """))
        .Build();
}
