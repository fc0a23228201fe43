namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// <see cref="NodeApp"/>'s functions in the Node.js v4 programming model: <c>package.json</c> with
/// <c>"main": "src/functions/*.js"</c> and the real <c>@azure/functions</c> 4.16.5 (<c>app.http</c>,
/// <c>app.storageBlob</c>, <c>app.timer</c>, <c>input.storageBlob</c>, <c>output.storageBlob</c>), indexed by the
/// worker; its <c>node_modules</c> is the one the set-up installs for <c>NodeV4Deps/</c> (a link, as an app's own would be).
/// </summary>
internal sealed class NodeV4App() : PipelineApp("node")
{
    /// <summary>The folder whose node_modules (npm ci by scripts/setup.d/node-apps.sh) the app links to.</summary>
    public static readonly string Dependencies = Path.Combine(RepositoryRoot.Find(), "test", "FaaSCache.Host.Tests", "EndToEnd", "NodeV4Deps");

    public override string InputBoundAs => "buffer";

    public override FunctionAppFolder Build() => NewBuilder("faascache-nodev4app", Runtime)
            .WithSymbolicLink("node_modules", Path.Combine(Dependencies, "node_modules"))
            .WithFile("package.json", """{ "name": "faascache-test-v4", "version": "1.0.0", "main": "src/functions/*.js" }""")
            .WithFile("src/functions/readModel.js", $$"""
                const crypto = require('crypto');
                const { app, input, output } = require('@azure/functions');

                const model = input.storageBlob({ path: '{{Models}}/{name}', connection: 'AzureWebJobsStorage' });
                const result = output.storageBlob({ path: '{{Results}}/{name}.txt', connection: 'AzureWebJobsStorage' });

                app.http('ReadModel', {
                    methods: ['GET', 'POST'],
                    extraInputs: [model],
                    extraOutputs: [result],
                    handler: async (request, context) => {
                        const bytes = context.extraInputs.get(model);
                        const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
                        context.extraOutputs.set(result, Buffer.from(`${bytes.length}:${sha256}`));
                        return { jsonBody: { bytes: bytes.length, sha256, buffer: Buffer.isBuffer(bytes) } };
                    },
                });
                """)
            .WithFile("src/functions/pipeline.js", $$"""
                const { app, input, output } = require('@azure/functions');

                const labelled = output.storageBlob({ path: '{{Labelled}}/{name}', connection: 'AzureWebJobsStorage' });
                app.http('Detect', {
                    methods: ['POST'],
                    extraOutputs: [labelled],
                    handler: async (request, context) => {
                        const image = Buffer.from(await request.arrayBuffer());
                        context.extraOutputs.set(labelled, Buffer.concat([Buffer.from('boxes:'), image]));
                        return { status: 202, body: `labelled ${image.length} bytes` };
                    },
                });

                for (const [name, stage, container] of [['People', 'people', '{{People}}'], ['Cars', 'cars', '{{Cars}}']]) {
                    const model = input.storageBlob({ path: `{{Models}}/${stage}.bin`, connection: 'AzureWebJobsStorage' });
                    const detections = output.storageBlob({ path: `${container}/{name}.json`, connection: 'AzureWebJobsStorage' });
                    app.storageBlob(name, {
                        path: '{{Labelled}}/{name}',
                        connection: 'AzureWebJobsStorage',
                        extraInputs: [model],
                        extraOutputs: [detections],
                        handler: async (image, context) => {
                            const weights = context.extraInputs.get(model);
                            context.extraOutputs.set(detections, JSON.stringify({ stage, image: image.toString('utf8'), model_bytes: weights.length }));
                        },
                    });
                }

                const last = output.storageBlob({ path: '{{Ticks}}/last.txt', connection: 'AzureWebJobsStorage' });
                app.timer('Tick', {
                    schedule: '* * * * * *',
                    extraOutputs: [last],
                    handler: async (timer, context) => {
                        context.extraOutputs.set(last, JSON.stringify({ past_due: timer.isPastDue }));
                    },
                });
                """)
            .Build();
}
