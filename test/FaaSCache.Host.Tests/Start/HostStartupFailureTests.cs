namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// The built host, run as a process, stops start-up on a broken app: it exits non-zero and prints the
/// file and the problem. (In the Azurite collection only so that host processes never run side by side
/// on this 2-core machine; these runs fail before they touch storage.)
/// </summary>
[Trait("Category", "Integration")]
public sealed class HostStartupFailureTests : AzuriteTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task The_host_exits_non_zero_naming_a_malformed_function_json_and_the_problem()
    {
        using var shm = new TempShmDirectory();
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
            .WithFunction("Broken", """{ "bindings": [ { "type": "httpTrigger", "direction": "in" """, ("__init__.py", "def main(req):\n    pass\n"))
            .Build();

        HostRun run = await FaaSCacheHostProcess.RunToExitAsync(app.Path, "UseDevelopmentStorage=true", shm.Path, ExitTimeout);

        Assert.NotEqual(0, run.ExitCode);
        Assert.Contains("cannot start the app", run.Output, StringComparison.Ordinal);
        Assert.Contains(app.FunctionJsonPath("Broken"), run.Output, StringComparison.Ordinal);
        Assert.Contains("is not valid JSON", run.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("Functions:", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_host_exits_non_zero_naming_a_missing_worker_config_json()
    {
        using var shm = new TempShmDirectory();
        using var emptyWorkers = new TempFolder("faascache-workers-");
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
            .WithFunction("Hello", """{ "bindings": [ { "type": "httpTrigger", "direction": "in", "name": "req" } ] }""", ("__init__.py", "def main(req):\n    pass\n"))
            .Build();

        HostRun run = await FaaSCacheHostProcess.RunToExitAsync(
            app.Path, "UseDevelopmentStorage=true", shm.Path, ExitTimeout, new Dictionary<string, string> { ["--workers-dir"] = emptyWorkers.Path });

        Assert.NotEqual(0, run.ExitCode);
        Assert.Contains(Path.Combine(emptyWorkers.Path, "python", "worker.config.json"), run.Output, StringComparison.Ordinal);
        Assert.Contains("not found", run.Output, StringComparison.Ordinal);
    }
}
