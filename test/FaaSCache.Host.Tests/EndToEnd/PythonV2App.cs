namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// <see cref="PythonApp"/>'s functions in the Python v2 programming model: one <c>function_app.py</c> with
/// <c>func.FunctionApp()</c> and decorators (a Blueprint for the pipeline's stages), indexed by the worker, plus a timer
/// (<c>Tick</c>, every second) that writes <c>ticks-X/last.txt</c>.
/// </summary>
internal sealed class PythonV2App() : PipelineApp("python")
{
    public override string InputBoundAs => "stream";

    public override FunctionAppFolder Build() => NewBuilder("faascache-pyv2app", Runtime)
        .WithFile("function_app.py", $$"""
            import hashlib
            import json

            import azure.functions as func

            app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


            @app.function_name("ReadModel")
            @app.route(methods=["GET", "POST"])
            @app.blob_input(arg_name="model", path="{{Models}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @app.blob_output(arg_name="result", path="{{Results}}/{name}.txt", connection="AzureWebJobsStorage")
            {{PythonApp.ReadModelFunction}}


            @app.function_name("Detect")
            @app.route(methods=["POST"])
            @app.blob_output(arg_name="labelled", path="{{Labelled}}/{name}", connection="AzureWebJobsStorage")
            def detect(req: func.HttpRequest, labelled: func.Out[bytes]) -> func.HttpResponse:
                image = req.get_body()
                labelled.set(b"boxes:" + image)
                return func.HttpResponse(f"labelled {len(image)} bytes", status_code=202)


            @app.function_name("Tick")
            @app.schedule(schedule="* * * * * *", arg_name="timer")
            @app.blob_output(arg_name="last", path="{{Ticks}}/last.txt", connection="AzureWebJobsStorage")
            def tick(timer: func.TimerRequest, last: func.Out[str]) -> None:
                last.set(json.dumps({"past_due": timer.past_due}))


            stages = func.Blueprint()


            def stage(name, image, model):
                return json.dumps({"stage": name, "image": image.read().decode(), "model_bytes": len(model.read())})


            @stages.function_name("People")
            @stages.blob_trigger(arg_name="image", path="{{Labelled}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @stages.blob_input(arg_name="model", path="{{Models}}/people.bin", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @stages.blob_output(arg_name="detections", path="{{People}}/{name}.json", connection="AzureWebJobsStorage")
            def people(image: func.InputStream, model: func.InputStream, detections: func.Out[str]) -> None:
                detections.set(stage("people", image, model))


            @stages.function_name("Cars")
            @stages.blob_trigger(arg_name="image", path="{{Labelled}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @stages.blob_input(arg_name="model", path="{{Models}}/cars.bin", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @stages.blob_output(arg_name="detections", path="{{Cars}}/{name}.json", connection="AzureWebJobsStorage")
            def cars(image: func.InputStream, model: func.InputStream, detections: func.Out[str]) -> None:
                detections.set(stage("cars", image, model))


            app.register_functions(stages)
            """)
        .Build();
}
