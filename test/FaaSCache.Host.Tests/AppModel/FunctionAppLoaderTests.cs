using System.Collections;

namespace FaaSCache.Host.Tests.AppModel;

/// <summary>
/// The loader reads an app folder as Core Tools does and stops at the first problem with a message that
/// names the file and the problem. No processes: <see cref="FunctionAppLoader.Load"/> is called directly
/// with an explicit (empty) environment and the repository's real worker configurations.
/// </summary>
[Trait("Category", "Unit")]
public sealed class FunctionAppLoaderTests
{
    private const string Storage = "UseDevelopmentStorage=true";

    private const string HttpFunctionJson = """
        {
          "scriptFile": "__init__.py",
          "bindings": [
            { "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
            { "type": "blob", "direction": "in", "name": "model", "path": "models/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
            { "type": "blob", "direction": "out", "name": "result", "path": "results/{name}.txt" },
            { "type": "http", "direction": "out", "name": "$return" }
          ]
        }
        """;

    private const string PythonScript = "def main(req):\n    return 'ok'\n";

    private static readonly string WorkersDirectory = Path.Combine(RepositoryRoot.Find(), "src", "Workers");

    [Fact]
    public void A_well_formed_app_loads_its_functions_bindings_and_worker()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).Build();

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment());

        FunctionDefinition function = Assert.Single(loaded.FolderFunctions);
        Assert.Equal("Hello", function.Name);
        Assert.Equal("python", function.Language);
        Assert.Equal(Path.Combine(app.Path, "Hello", "__init__.py"), function.ScriptFile);
        Assert.True(function.Trigger.IsHttpTrigger);
        Assert.Equal(["GET"], function.Methods);
        Assert.Equal(["req", "model", "result", "$return"], function.Bindings.Select(b => b.Name));
        Assert.Equal("models/{name}", function.Bindings[1].Path);
        Assert.Equal(BindingDirection.Out, function.Bindings[2].Direction);
        Assert.Equal(Storage, loaded.StorageConnection);
        Assert.True(loaded.Workers.ContainsKey("python"));
        Assert.Equal(Path.Combine(WorkersDirectory, "python", "worker.py"), loaded.Workers["python"].DefaultWorkerPath);
    }

    [Fact]
    public void The_environment_wins_over_local_settings_for_the_storage_connection()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).Build();
        const string fromEnvironment = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;";

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, new Hashtable { ["AzureWebJobsStorage"] = fromEnvironment });

        Assert.Equal(fromEnvironment, loaded.StorageConnection);
    }

    [Fact]
    public void A_malformed_host_json_stops_the_load_naming_the_file()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).WithHostJson("""{ "version": "2.0", "extensions": { """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.HostJsonPath, message, StringComparison.Ordinal);
        Assert.Contains("JSON", message, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void A_host_json_with_an_invalid_faasCache_value_names_the_file_the_key_the_value_and_what_is_allowed()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson)
            .WithHostJson("""{ "version": "2.0", "extensions": { "faasCache": { "consistency": "sometimes" } } }""")
            .Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.HostJsonPath, message, StringComparison.Ordinal);
        Assert.Contains("consistency", message, StringComparison.Ordinal);
        Assert.Contains("sometimes", message, StringComparison.Ordinal);
        Assert.Contains("strong", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_malformed_function_json_stops_the_load_naming_the_file()
    {
        using FunctionAppFolder app = PythonApp("""{ "bindings": [ { "type": "httpTrigger", """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("not valid JSON", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_function_json_without_a_trigger_says_a_function_needs_exactly_one()
    {
        using FunctionAppFolder app = PythonApp("""
            { "bindings": [ { "type": "blob", "direction": "in", "name": "model", "path": "models/a" } ] }
            """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("exactly one trigger", message, StringComparison.Ordinal);
        Assert.Contains("found 0", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_function_json_with_two_triggers_says_a_function_needs_exactly_one()
    {
        using FunctionAppFolder app = PythonApp("""
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req" },
                { "type": "blobTrigger", "direction": "in", "name": "image", "path": "images/{name}" }
              ]
            }
            """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("exactly one trigger", message, StringComparison.Ordinal);
        Assert.Contains("found 2", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_blob_binding_without_a_path_names_the_file_and_the_binding()
    {
        using FunctionAppFolder app = PythonApp("""
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req" },
                { "type": "blob", "direction": "in", "name": "model" }
              ]
            }
            """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("'model'", message, StringComparison.Ordinal);
        Assert.Contains("no \"path\"", message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("Models_Bad/{name}")]
    [InlineData("ab/{name}")]
    public void A_blob_path_with_an_invalid_container_name_names_the_container_and_the_rule(string path)
    {
        using FunctionAppFolder app = PythonApp($$"""
            {
              "bindings": [
                { "type": "httpTrigger", "direction": "in", "name": "req" },
                { "type": "blob", "direction": "in", "name": "model", "path": "{{path}}" }
              ]
            }
            """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains($"container '{path.Split('/')[0]}'", message, StringComparison.Ordinal);
        Assert.Contains("3 to 63 lowercase letters", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_script_file_names_the_function_json_and_the_script()
    {
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("AzureWebJobsStorage", Storage)
            .WithFunction("Hello", """
                {
                  "scriptFile": "missing.py",
                  "bindings": [ { "type": "httpTrigger", "direction": "in", "name": "req" } ]
                }
                """)
            .Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("scriptFile 'missing.py' does not exist", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_worker_config_json_names_the_expected_file_and_the_workers_dir_option()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).Build();
        using var emptyWorkers = new TempFolder("faascache-workers-");

        string message = LoadError(app.Path, emptyWorkers.Path);

        Assert.Contains(Path.Combine(emptyWorkers.Path, "python", "worker.config.json"), message, StringComparison.Ordinal);
        Assert.Contains("not found", message, StringComparison.Ordinal);
        Assert.Contains("--workers-dir", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_AzureWebJobsStorage_names_the_setting_and_local_settings_json()
    {
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
            .WithFunction("Hello", HttpFunctionJson, ("__init__.py", PythonScript))
            .Build();

        string message = LoadError(app.Path);

        Assert.Contains("'AzureWebJobsStorage' is not set", message, StringComparison.Ordinal);
        Assert.Contains(app.LocalSettingsPath, message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_malformed_local_settings_json_stops_the_load_naming_the_file()
    {
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithLocalSettingsJson("""{ "IsEncrypted": false, "Values": { "AzureWebJobsStorage": """)
            .WithFunction("Hello", HttpFunctionJson, ("__init__.py", PythonScript))
            .Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.LocalSettingsPath, message, StringComparison.Ordinal);
        Assert.Contains("not valid JSON", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_function_with_a_binding_this_host_does_not_serve_is_left_out_named_with_its_binding_and_the_rest_loads()
    {
        const string queueFunctionJson = """
            { "scriptFile": "__init__.py", "bindings": [
                { "type": "serviceBusTrigger", "direction": "in", "name": "msg", "queueName": "orders" },
                { "type": "serviceBus", "direction": "out", "name": "done", "queueName": "done" } ] }
            """;
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).WithFunction("Orders", queueFunctionJson, ("__init__.py", PythonScript)).Build();

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment());

        Assert.Equal("Hello", Assert.Single(loaded.FolderFunctions).Name);
        string error = Assert.Single(loaded.FunctionErrors);
        Assert.Contains("Function 'Orders'", error, StringComparison.Ordinal);
        Assert.Contains("binding 'msg' has type 'serviceBusTrigger', binding 'done' has type 'serviceBus'", error, StringComparison.Ordinal);
        Assert.Contains("the rest of the app runs", error, StringComparison.Ordinal);

        // An app whose every function is left out and that no worker indexes has nothing to run: refused, naming why
        // (with FUNCTIONS_WORKER_RUNTIME set the worker is asked first: StartCommandValidationTests).
        using FunctionAppFolder only = new FunctionAppBuilder()
            .WithSetting("AzureWebJobsStorage", Storage)
            .WithFunction("Orders", queueFunctionJson, ("__init__.py", PythonScript))
            .Build();
        AppLoadException refused = Assert.Throws<AppLoadException>(() => FunctionAppLoader.Load(only.Path, WorkersDirectory, NoEnvironment()));
        Assert.Contains("No function of", refused.Message, StringComparison.Ordinal);
        Assert.Contains("'serviceBusTrigger'", refused.Message, StringComparison.Ordinal);
    }

    private static FunctionAppBuilder PythonApp(string functionJson) => new FunctionAppBuilder()
        .WithSetting("AzureWebJobsStorage", Storage)
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
        .WithFunction("Hello", functionJson, ("__init__.py", PythonScript));

    [Fact]
    public void An_app_with_neither_function_json_folders_nor_a_worker_indexed_model_names_both_ways_and_what_was_looked_for()
    {
        using FunctionAppFolder app = new FunctionAppBuilder().WithSetting("AzureWebJobsStorage", Storage).Build();

        string message = LoadError(app.Path);

        Assert.Contains($"No functions found in '{app.Path}'", message, StringComparison.Ordinal);
        Assert.Contains("function.json folders", message, StringComparison.Ordinal);
        Assert.Contains("function_app.py", message, StringComparison.Ordinal);
        Assert.Contains("package.json", message, StringComparison.Ordinal);
        Assert.Contains("'FUNCTIONS_WORKER_RUNTIME' is not set", message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_python_v2_app_is_left_to_its_worker_to_index()
    {
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("AzureWebJobsStorage", Storage)
            .WithFile("function_app.py", "import azure.functions as func\napp = func.FunctionApp()\n")
            .Build();

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment());

        Assert.Equal("python", loaded.IndexingLanguage);
        Assert.Empty(loaded.FolderFunctions);
        Assert.Empty(loaded.Functions);
        Assert.False(loaded.Indexed.IsCompleted);
        Assert.True(loaded.Workers["python"].WorkerIndexing);
    }

    [Fact]
    public void A_node_v4_app_is_found_by_its_package_json()
    {
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("AzureWebJobsStorage", Storage)
            .WithFile("package.json", """{ "name": "app", "main": "src/functions/*.js" }""")
            .Build();

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment());

        Assert.Equal("node", loaded.IndexingLanguage);
    }

    [Fact]
    public void A_function_json_app_is_indexed_by_folders_at_once()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).WithoutSetting("FUNCTIONS_WORKER_RUNTIME").Build();

        FunctionApp loaded = FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment());

        Assert.Null(loaded.IndexingLanguage);
        Assert.True(loaded.Indexed.IsCompletedSuccessfully);
        Assert.Equal("Hello", Assert.Single(loaded.Functions).Name);
    }

    [Fact]
    public void The_route_prefix_comes_from_host_json()
    {
        using FunctionAppFolder app = PythonApp(HttpFunctionJson).WithHostJson("""{ "version": "2.0", "extensions": { "http": { "routePrefix": "/v1/" } } }""").Build();

        Assert.Equal("v1", FunctionAppLoader.Load(app.Path, WorkersDirectory, NoEnvironment()).RoutePrefix);
    }

    [Fact]
    public void A_timer_trigger_with_a_bad_schedule_names_the_schedule_and_what_is_allowed()
    {
        using FunctionAppFolder app = PythonApp("""
            { "bindings": [ { "type": "timerTrigger", "direction": "in", "name": "timer", "schedule": "every minute" } ] }
            """).Build();

        string message = LoadError(app.Path);

        Assert.Contains(app.FunctionJsonPath("Hello"), message, StringComparison.Ordinal);
        Assert.Contains("'every minute'", message, StringComparison.Ordinal);
        Assert.Contains("NCRONTAB", message, StringComparison.Ordinal);
    }

    private static Hashtable NoEnvironment() => [];

    private static string LoadError(string appDirectory, string? workersDirectory = null) =>
        Assert.Throws<AppLoadException>(() => FunctionAppLoader.Load(appDirectory, workersDirectory ?? WorkersDirectory, NoEnvironment())).Message;
}
