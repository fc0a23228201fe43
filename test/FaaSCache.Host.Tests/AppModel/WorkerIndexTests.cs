using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Tests.AppModel;

/// <summary>
/// The host's side of worker indexing on the metadata today's real workers return (the JSON of
/// shared/reference/worker-indexing.md §2: Python v2 from azure-functions 1.22, Node.js v4 from @azure/functions 4.x,
/// .NET isolated from Worker.Sdk 2.1): each becomes the same functions and bindings, whatever the spelling.
/// </summary>
[Trait("Category", "Unit")]
public sealed class WorkerIndexTests
{
    private static readonly FunctionApp App = new()
    {
        RootDirectory = "/app",
        Settings = new Dictionary<string, string> { ["AzureWebJobsStorage"] = "UseDevelopmentStorage=true" },
        StorageConnection = "UseDevelopmentStorage=true",
        FolderFunctions = [],
        Workers = new Dictionary<string, WorkerDescription>(),
        IndexingLanguage = "python",
    };

    [Fact]
    public void Python_v2_metadata_becomes_a_function_with_the_workers_id_and_its_bindings()
    {
        RpcFunctionMetadata copy = Metadata("copy_blob", "7c8e1a6f-0000-5000-8000-000000000001", "function_app.py",
            """{"direction": "OUT", "type": "blob", "name": "dst", "path": "thumbs/{name}", "connection": "AzureWebJobsStorage"}""",
            """{"direction": "IN", "dataType": "BINARY", "type": "blob", "name": "src", "path": "images/{name}", "connection": "AzureWebJobsStorage"}""",
            """{"direction": "IN", "type": "httpTrigger", "name": "req", "methods": ["GET"], "authLevel": "ANONYMOUS", "route": "copy/{name}"}""",
            """{"direction": "OUT", "type": "http", "name": "$return"}""");
        copy.Properties["worker_indexed"] = "True";

        WorkerIndexResult result = WorkerIndex.FromResponse(App, "python", Response(copy));

        Assert.True(result.Errors.Count == 0, string.Join(Environment.NewLine, result.Errors));
        FunctionDefinition f = Assert.Single(result.Functions);
        Assert.Equal("7c8e1a6f-0000-5000-8000-000000000001", f.FunctionId);
        Assert.True(f.WorkerIndexed);
        Assert.Equal("copy/{name}", f.Route);
        Assert.Equal(["GET"], f.Methods);
        Assert.Equal("True", f.Properties["worker_indexed"]);
        BindingDefinition src = f.Bindings.Single(b => b.Name == "src");
        Assert.Equal((BindingDirection.In, "BINARY", "images/{name}"), (src.Direction, src.DataType, src.Path));
        Assert.Equal(BindingDirection.Out, f.Bindings.Single(b => b.Name == "dst").Direction);
        Assert.True(f.Bindings.Single(b => b.Name == "$return").IsHttpOutput);
    }

    [Fact]
    public void Node_v4_hashed_binding_names_and_lower_case_directions_are_read_as_they_are()
    {
        RpcFunctionMetadata copy = Metadata("copy_blob", "copy_blob", "copy.js",
            """{"route":"copy/{name}","methods":["GET"],"authLevel":"anonymous","type":"httpTrigger","name":"httpTrigger47fa58e70d","direction":"in"}""",
            """{"path":"images/{name}","connection":"AzureWebJobsStorage","type":"blob","name":"blobInput4a5a2969c1","direction":"in"}""",
            """{"type":"http","name":"$return","direction":"out"}""",
            """{"path":"thumbs/{name}","connection":"AzureWebJobsStorage","type":"blob","name":"blobOutput9b057cf0bd","direction":"out"}""");
        RpcFunctionMetadata onBlob = Metadata("on_blob", "on_blob", "copy.js",
            """{"path":"images/{name}","connection":"AzureWebJobsStorage","type":"blobTrigger","name":"blobTrigger0123456789","direction":"in"}""");

        WorkerIndexResult result = WorkerIndex.FromResponse(App, "node", Response(onBlob, copy));

        Assert.Equal(["copy_blob", "on_blob"], result.Functions.Select(f => f.Name));
        Assert.Equal("images/{name}", result.Functions[0].Bindings.Single(b => b.Name == "blobInput4a5a2969c1").Path);
        Assert.Equal("blobTrigger", result.Functions[1].Trigger.Type);
    }

    [Fact]
    public void Dotnet_isolated_blobPath_and_capitalised_directions_are_a_blob_path_and_a_direction()
    {
        RpcFunctionMetadata copy = Metadata("copy_blob", "b1", "App.dll",
            """{"name": "req", "direction": "In", "type": "httpTrigger", "authLevel": "Anonymous", "methods": ["get"], "route": "copy/{name}", "properties": {}}""",
            """{"name": "src", "direction": "In", "type": "blob", "blobPath": "images/{name}", "connection": "AzureWebJobsStorage", "properties": {"supportsDeferredBinding": "True"}}""",
            """{"name": "Dst", "direction": "Out", "type": "blob", "dataType": "String", "blobPath": "thumbs/{name}", "connection": "AzureWebJobsStorage", "properties": {}}""",
            """{"name": "HttpResponse", "type": "http", "direction": "Out"}""");

        FunctionDefinition f = Assert.Single(WorkerIndex.FromResponse(App, "dotnet-isolated", Response(copy)).Functions);

        Assert.Equal("images/{name}", f.Bindings.Single(b => b.Name == "src").Path);
        Assert.Equal(("String", "thumbs/{name}"), (f.Bindings.Single(b => b.Name == "Dst").DataType, f.Bindings.Single(b => b.Name == "Dst").Path));
        Assert.True(f.Bindings.Single(b => b.Name == "HttpResponse").IsHttpOutput);
        Assert.Equal(["GET"], f.Methods);
    }

    [Fact]
    public void A_worker_that_declines_indexing_leaves_the_function_json_folders_in_force()
    {
        var response = new FunctionMetadataResponse { UseDefaultMetadataIndexing = true, Result = new StatusResult { Status = StatusResult.Types.Status.Success } };

        WorkerIndexResult result = WorkerIndex.FromResponse(App, "python", response);

        Assert.True(result.UsedFolders);
        Assert.Same(App.FolderFunctions, result.Functions);
    }

    [Fact]
    public void An_invalid_function_is_dropped_alone_with_an_error_naming_it_and_the_problem()
    {
        RpcFunctionMetadata good = Metadata("good", "g", "function_app.py", """{"direction": "IN", "type": "httpTrigger", "name": "req"}""");
        RpcFunctionMetadata noTrigger = Metadata("no_trigger", "n", "function_app.py", """{"direction": "IN", "type": "blob", "name": "src", "path": "images/x"}""");
        RpcFunctionMetadata badName = Metadata("9lives", "b", "function_app.py", """{"direction": "IN", "type": "httpTrigger", "name": "req"}""");
        RpcFunctionMetadata unsupported = Metadata("queue", "q", "function_app.py", """{"direction": "IN", "type": "serviceBusTrigger", "name": "msg"}""");
        RpcFunctionMetadata badJson = Metadata("bad_json", "j", "function_app.py", """{"direction": "IN", "type": """);

        WorkerIndexResult result = WorkerIndex.FromResponse(App, "python", Response(good, noTrigger, badName, unsupported, badJson));

        Assert.Equal("good", Assert.Single(result.Functions).Name);
        Assert.Equal(4, result.Errors.Count);
        Assert.Contains(result.Errors, e => e.Contains("'no_trigger'", StringComparison.Ordinal) && e.Contains("exactly one trigger", StringComparison.Ordinal));
        Assert.Contains(result.Errors, e => e.Contains("'9lives'", StringComparison.Ordinal) && e.Contains("start with a letter", StringComparison.Ordinal));
        Assert.Contains(result.Errors, e => e.Contains("'queue'", StringComparison.Ordinal) && e.Contains("serviceBusTrigger", StringComparison.Ordinal));
        Assert.Contains(result.Errors, e => e.Contains("'bad_json'", StringComparison.Ordinal) && e.Contains("not valid JSON", StringComparison.Ordinal));
    }

    [Fact]
    public void A_worker_failure_is_reported_and_the_functions_it_returned_are_still_used()
    {
        FunctionMetadataResponse response = Response(Metadata("good", "g", "function_app.py", """{"direction": "IN", "type": "httpTrigger", "name": "req"}"""));
        response.Result = new StatusResult { Status = StatusResult.Types.Status.Failure, Exception = new RpcException { Message = "ImportError: no module named 'numpy'" } };

        WorkerIndexResult result = WorkerIndex.FromResponse(App, "python", response);

        Assert.Single(result.Functions);
        Assert.Contains("ImportError: no module named 'numpy'", Assert.Single(result.Errors), StringComparison.Ordinal);
    }

    [Fact]
    public void A_function_the_worker_failed_to_index_keeps_its_error_for_every_invocation()
    {
        RpcFunctionMetadata broken = Metadata("broken", "b", "function_app.py", """{"direction": "IN", "type": "httpTrigger", "name": "req"}""");
        broken.Status = new StatusResult { Status = StatusResult.Types.Status.Failure, Result = "bad decorator" };

        FunctionDefinition f = Assert.Single(WorkerIndex.FromResponse(App, "python", Response(broken)).Functions);

        Assert.Equal("bad decorator", f.IndexingError);
    }

    private static RpcFunctionMetadata Metadata(string name, string id, string script, params string[] rawBindings)
    {
        var metadata = new RpcFunctionMetadata { Name = name, FunctionId = id, ScriptFile = script, Directory = "/app", EntryPoint = name };
        metadata.RawBindings.Add(rawBindings);
        return metadata;
    }

    private static FunctionMetadataResponse Response(params RpcFunctionMetadata[] functions)
    {
        var response = new FunctionMetadataResponse { Result = new StatusResult { Status = StatusResult.Types.Status.Success } };
        response.FunctionMetadataResults.Add(functions);
        return response;
    }
}
