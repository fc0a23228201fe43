using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Triggers;

/// <summary>
/// A held-out-style order app with a queue trigger, a blob input bound by the message, a blob output and a queue output,
/// written as each programming model writes it (the code a user of Azure Functions would write; nothing FaaSCache-only).
/// </summary>
internal static class QueueApp
{
    /// <summary>The function's name in every model.</summary>
    public const string Function = "ProcessOrder";

    /// <summary>The host.json: queues polled at least every second (the extension's default is a minute), failures shown again at once.</summary>
    private const string HostJson = """
        {
          "version": "2.0",
          "extensions": {
            "queues": { "maxPollingInterval": "00:00:01", "visibilityTimeout": "00:00:00" },
            "faasCache": { "consistency": "strong", "persist": "sync" }
          }
        }
        """;

    /// <summary>The containers and queues of one test.</summary>
    public sealed record Names(string Incoming, string Processed, string Orders, string Done);

    /// <summary>The app in <paramref name="model"/>: python-v1, python-v2, node-v3 or node-v4.</summary>
    public static FunctionAppFolder Build(string model, Names n) => model switch
    {
        "python-v2" => PipelineApp.NewBuilder("faascache-orders", "python").WithHostJson(HostJson).WithFile("function_app.py", $$"""
            import json

            import azure.functions as func

            app = func.FunctionApp()


            @app.function_name("{{Function}}")
            @app.queue_trigger(arg_name="msg", queue_name="{{n.Orders}}", connection="AzureWebJobsStorage")
            @app.blob_input(arg_name="src", path="{{n.Incoming}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @app.blob_output(arg_name="dst", path="{{n.Processed}}/{name}", connection="AzureWebJobsStorage")
            @app.queue_output(arg_name="done", queue_name="{{n.Done}}", connection="AzureWebJobsStorage")
            def process_order(msg: func.QueueMessage, src: bytes, dst: func.Out[bytes], done: func.Out[str]) -> None:
                order = msg.get_json()
                if order.get("fail"):
                    raise ValueError("order refused")
                dst.set(src.upper())
                done.set(json.dumps({"name": order["name"], "bytes": len(src), "dequeueCount": msg.dequeue_count, "id": msg.id}))
            """).Build(),
        "python-v1" => PipelineApp.NewBuilder("faascache-orders", "python").WithHostJson(HostJson).WithFunction(Function, $$"""
            {
              "scriptFile": "__init__.py",
              "bindings": [
                { "type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "{{n.Orders}}", "connection": "AzureWebJobsStorage" },
                { "type": "blob", "direction": "in", "name": "src", "path": "{{n.Incoming}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "blob", "direction": "out", "name": "dst", "path": "{{n.Processed}}/{name}", "connection": "AzureWebJobsStorage" },
                { "type": "queue", "direction": "out", "name": "done", "queueName": "{{n.Done}}", "connection": "AzureWebJobsStorage" }
              ]
            }
            """, ("__init__.py", """
            import json

            import azure.functions as func


            def main(msg: func.QueueMessage, src: bytes, dst: func.Out[bytes], done: func.Out[str]) -> None:
                order = msg.get_json()
                if order.get("fail"):
                    raise ValueError("order refused")
                dst.set(src.upper())
                done.set(json.dumps({"name": order["name"], "bytes": len(src), "dequeueCount": msg.dequeue_count, "id": msg.id}))
            """)).Build(),
        "node-v4" => PipelineApp.NewBuilder("faascache-orders", "node").WithHostJson(HostJson)
            .WithSymbolicLink("node_modules", Path.Combine(NodeV4App.Dependencies, "node_modules"))
            .WithFile("package.json", """{ "name": "faascache-orders", "version": "1.0.0", "main": "src/functions/*.js" }""")
            .WithFile("src/functions/orders.js", $$"""
                const { app, input, output } = require('@azure/functions');

                const src = input.storageBlob({ path: '{{n.Incoming}}/{name}', connection: 'AzureWebJobsStorage' });
                const dst = output.storageBlob({ path: '{{n.Processed}}/{name}', connection: 'AzureWebJobsStorage' });
                const done = output.storageQueue({ queueName: '{{n.Done}}', connection: 'AzureWebJobsStorage' });

                app.storageQueue('{{Function}}', {
                    queueName: '{{n.Orders}}',
                    connection: 'AzureWebJobsStorage',
                    extraInputs: [src],
                    extraOutputs: [dst, done],
                    handler: async (order, context) => {
                        if (order.fail) {
                            throw new Error('order refused');
                        }
                        const bytes = context.extraInputs.get(src);
                        context.extraOutputs.set(dst, Buffer.from(bytes.toString().toUpperCase()));
                        context.extraOutputs.set(done, JSON.stringify({
                            name: order.name, bytes: bytes.length, dequeueCount: context.triggerMetadata.dequeueCount, id: context.triggerMetadata.id,
                        }));
                    },
                });
                """).Build(),
        "node-v3" => PipelineApp.NewBuilder("faascache-orders", "node").WithHostJson(HostJson).WithFunction(Function, $$"""
            {
              "bindings": [
                { "type": "queueTrigger", "direction": "in", "name": "order", "queueName": "{{n.Orders}}", "connection": "AzureWebJobsStorage" },
                { "type": "blob", "direction": "in", "name": "src", "path": "{{n.Incoming}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "blob", "direction": "out", "name": "dst", "path": "{{n.Processed}}/{name}", "connection": "AzureWebJobsStorage" },
                { "type": "queue", "direction": "out", "name": "done", "queueName": "{{n.Done}}", "connection": "AzureWebJobsStorage" }
              ]
            }
            """, ("index.js", """
            module.exports = async function (context, order) {
                if (order.fail) {
                    throw new Error('order refused');
                }
                const bytes = context.bindings.src;
                context.bindings.dst = Buffer.from(bytes.toString().toUpperCase());
                context.bindings.done = JSON.stringify({
                    name: order.name, bytes: bytes.length, dequeueCount: context.bindingData.dequeueCount, id: context.bindingData.id,
                });
            };
            """)).Build(),
        _ => throw new ArgumentOutOfRangeException(nameof(model), model, "python-v1, python-v2, node-v3 or node-v4"),
    };
}
