namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// An inline Python function app (function.json model, <c>import azure.functions as func</c>) whose
/// containers carry a per-test suffix, so tests sharing one Azurite never see each other's blobs.
/// <list type="bullet">
/// <item><c>ReadModel</c> (HTTP): reads <c>models-X/{name}</c> through a <c>func.InputStream</c> and writes
/// "size:sha256" to <c>results-X/{name}.txt</c>.</item>
/// <item>The AMBER Alert shape: <c>Detect</c> (HTTP, the bounding-box stage) writes the request body to
/// <c>labelled-X/{name}</c>, the blob-trigger path of <c>People</c> and <c>Cars</c>, which each read their
/// model and write <c>people-X/{name}.json</c> / <c>cars-X/{name}.json</c>.</item>
/// <item><c>OnUpload</c> (blob trigger on <c>uploads-X/{name}</c>): writes the upper-cased blob to <c>processed-X/{name}</c>.</item>
/// <item><c>Slow</c> (HTTP): logs "slow-started &lt;invocation id&gt;" and sleeps <c>?seconds=</c>.</item>
/// </list>
/// </summary>
internal sealed class PythonApp() : PipelineApp("python")
{
    /// <summary>
    /// <c>ReadModel</c>'s Python, the same function in both programming models (here and in <see cref="PythonV2App"/>):
    /// hashes the blob in 1 MiB chunks, writes "size:sha256" and answers size, digest and whether the input was a stream.
    /// </summary>
    public const string ReadModelFunction = """
        def read_model(req: func.HttpRequest, model: func.InputStream, result: func.Out[bytes]) -> func.HttpResponse:
            digest = hashlib.sha256()
            size = 0
            while True:
                chunk = model.read(1 << 20)
                if not chunk:
                    break
                digest.update(chunk)
                size += len(chunk)
            result.set(f"{size}:{digest.hexdigest()}".encode())
            body = {"bytes": size, "sha256": digest.hexdigest(), "stream": isinstance(model, func.InputStream)}
            return func.HttpResponse(json.dumps(body), mimetype="application/json")
        """;

    public override string InputBoundAs => "stream";

    public string Uploads => $"uploads-{Suffix}";

    public string Processed => $"processed-{Suffix}";

    public override FunctionAppFolder Build() => NewBuilder("faascache-pyapp", Runtime)
        .WithFunction("ReadModel", $$"""
            {
              "scriptFile": "__init__.py",
              "entryPoint": "read_model",
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get", "post"] },
                { "type": "blob", "direction": "in", "name": "model", "path": "{{Models}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "blob", "direction": "out", "name": "result", "path": "{{Results}}/{name}.txt", "connection": "AzureWebJobsStorage" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", $$"""
            import hashlib
            import json

            import azure.functions as func


            {{ReadModelFunction}}
            """))
        .WithFunction("Detect", $$"""
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "blob", "direction": "out", "name": "labelled", "path": "{{Labelled}}/{name}" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(req: func.HttpRequest, labelled: func.Out[bytes]) -> func.HttpResponse:
                image = req.get_body()
                labelled.set(b"boxes:" + image)
                return func.HttpResponse(f"labelled {len(image)} bytes", status_code=202)
            """))
        .WithFunction("People", StageFunctionJson("people", People), ("__init__.py", StageScript("people")))
        .WithFunction("Cars", StageFunctionJson("cars", Cars), ("__init__.py", StageScript("cars")))
        .WithFunction("OnUpload", $$"""
            {
              "bindings": [
                { "type": "blobTrigger", "direction": "in", "name": "upload", "path": "{{Uploads}}/{name}" },
                { "type": "blob", "direction": "out", "name": "processed", "path": "{{Processed}}/{name}" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(upload: func.InputStream, processed: func.Out[bytes]) -> None:
                processed.set(upload.read().upper())
            """))
        .WithFunction("Slow", """
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import logging
            import time

            import azure.functions as func


            def main(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
                logging.info("slow-started %s", context.invocation_id)
                time.sleep(float(req.params.get("seconds", "0")))
                return func.HttpResponse(f"slept in {context.invocation_id}")
            """))
        .Build();

    private static string StageScript(string stage) => $$"""
        import json

        import azure.functions as func


        def main(image: func.InputStream, model: func.InputStream, detections: func.Out[str]) -> None:
            data = image.read()
            weights = model.read()
            detections.set(json.dumps({"stage": "{{stage}}", "image": data.decode(), "model_bytes": len(weights)}))
        """;
}
