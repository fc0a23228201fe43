namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// The Node.js twin of <see cref="PythonApp"/>, in the function.json programming model Azure Functions users
/// write (<c>module.exports = async function (context, req) { ... }</c>, <c>context.bindings</c>, <c>context.res</c>):
/// <c>ReadModel</c> (HTTP, a blob input and a blob output) and the AMBER Alert shape <c>Detect</c> → <c>People</c>, <c>Cars</c>.
/// </summary>
internal sealed class NodeApp() : PipelineApp("node")
{
    public override string InputBoundAs => "buffer";

    public override FunctionAppFolder Build() => NewBuilder("faascache-nodeapp", Runtime)
        .WithFunction("ReadModel", $$"""
            {
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get", "post"] },
                { "type": "blob", "direction": "in", "name": "model", "path": "{{Models}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "blob", "direction": "out", "name": "result", "path": "{{Results}}/{name}.txt", "connection": "AzureWebJobsStorage" },
                { "type": "http", "direction": "out", "name": "res" }
              ]
            }
            """, ("index.js", """
            const crypto = require('crypto');

            module.exports = async function (context, req) {
                const model = context.bindings.model;
                const sha256 = crypto.createHash('sha256').update(model).digest('hex');
                context.log(`ReadModel read ${model.length} bytes`);
                context.bindings.result = Buffer.from(`${model.length}:${sha256}`);
                context.res = {
                    status: 200,
                    headers: { 'content-type': 'application/json' },
                    body: { bytes: model.length, sha256, buffer: Buffer.isBuffer(model) },
                };
            };
            """))
        .WithFunction("Detect", $$"""
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                { "type": "blob", "direction": "out", "name": "labelled", "path": "{{Labelled}}/{name}" },
                { "type": "http", "direction": "out", "name": "res" }
              ]
            }
            """, ("index.js", """
            module.exports = async function (context, req) {
                const image = Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.rawBody || '');
                context.bindings.labelled = Buffer.concat([Buffer.from('boxes:'), image]);
                context.res = { status: 202, body: `labelled ${image.length} bytes` };
            };
            """))
        .WithFunction("People", StageFunctionJson("people", People), ("index.js", StageScript("people")))
        .WithFunction("Cars", StageFunctionJson("cars", Cars), ("index.js", StageScript("cars")))
        .Build();

    private static string StageScript(string stage) => $$"""
        module.exports = async function (context, image) {
            const model = context.bindings.model;
            context.bindings.detections = JSON.stringify({ stage: '{{stage}}', image: image.toString('utf8'), model_bytes: model.length });
        };
        """;
}
