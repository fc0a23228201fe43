namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// A language worker that cannot start (here: a copy of the Python worker with a syntax error) is tried a bounded
/// number of times, then the host marks the language failed, reports the worker's own error in its status and log,
/// answers invocations at once with 503 naming that error, and still stops promptly on SIGTERM.
/// </summary>
[Trait("Category", "Integration")]
public sealed class WorkerStartupFailureTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_worker_that_keeps_failing_to_start_is_reported_with_its_error_and_invocations_get_503()
    {
        using var workers = new TempFolder("faascache-broken-workers-");
        Folders.Copy(Path.Combine(RepositoryRoot.Find(), "src", "Workers", "python"), Path.Combine(workers.Path, "python"), "__pycache__", "_generated");
        await File.AppendAllTextAsync(Path.Combine(workers.Path, "python", "worker.py"), "\ndef broken(:\n");
        using var shm = new TempShmDirectory();
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
            .WithFunction("Hello", """{ "bindings": [ { "type": "httpTrigger", "direction": "in", "name": "req" }, { "type": "http", "direction": "out", "name": "$return" } ] }""", ("__init__.py", "def main(req):\n    return 'hi'\n"))
            .Build();

        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(
            app.Path, azurite.ConnectionString, shm.Path, extraArgs: new Dictionary<string, string> { ["--workers-dir"] = workers.Path, ["--membership"] = "off" });

        InvalidOperationException failure = await Assert.ThrowsAsync<InvalidOperationException>(() => host.WaitForWorkersAsync());
        Assert.Contains("python worker failed to start", failure.Message, StringComparison.Ordinal);
        Assert.Contains("SyntaxError", failure.Message, StringComparison.Ordinal);

        HostStatus status = await host.GetStatusAsync();
        HostWorkerStatus python = status.Worker("python");
        Assert.True(python.IsFailed);
        Assert.Contains("SyntaxError", python.Error, StringComparison.Ordinal);
        Assert.Contains("3 times in a row", python.Error, StringComparison.Ordinal);

        using HttpResponseMessage response = await host.Http.GetAsync("api/Hello");
        string body = await response.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Contains("SyntaxError", body, StringComparison.Ordinal);

        // The supervisor has stopped: nothing is restarted after the failure was declared.
        Assert.Equal(python.Restarts, (await host.GetStatusAsync()).Worker("python").Restarts);
        Assert.Contains("will not start it again", host.Output, StringComparison.Ordinal);
        Assert.Equal(0, await host.StopAsync());
    }
}
