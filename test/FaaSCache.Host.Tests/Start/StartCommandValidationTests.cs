using FaaSCache.Host.Start;

namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// Checks the start command makes after loading (no processes: <see cref="StartCommand.RunAsync"/> runs in
/// this process and returns before it builds the server). Its stderr is captured, so these tests share one
/// lock: <see cref="Console.SetError"/> is process-wide.
/// </summary>
[Trait("Category", "Unit")]
public sealed class StartCommandValidationTests
{
    private static readonly SemaphoreSlim ConsoleGate = new(1, 1);
    private static readonly string WorkersDirectory = Path.Combine(RepositoryRoot.Find(), "src", "Workers");

    [Fact]
    public async Task An_unknown_binding_type_stops_start_up_naming_the_file_the_binding_and_the_supported_types()
    {
        // No FUNCTIONS_WORKER_RUNTIME: no worker is asked to index, so the app is refused at load, before the host
        // makes its shared-memory folders or starts a worker (with it, the worker is asked first and the same reason
        // comes after the worker found nothing).
        using FunctionAppFolder app = new FunctionAppBuilder()
            .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true")
            .WithFunction("Enqueue", """
                {
                  "bindings": [
                    { "type": "httpTrigger", "direction": "in", "name": "req" },
                    { "type": "serviceBus", "direction": "out", "name": "message", "queueName": "work" }
                  ]
                }
                """, ("__init__.py", "def main(req, message):\n    pass\n"))
            .Build();

        (int code, string error) = await RunStartAsync("--script-root", app.Path, "--workers-dir", WorkersDirectory, "--port", "7071");

        Assert.Equal(1, code);
        Assert.Contains(app.FunctionJsonPath("Enqueue"), error, StringComparison.Ordinal);
        Assert.Contains("binding 'message' has type 'serviceBus'", error, StringComparison.Ordinal);
        Assert.Contains("supported: httpTrigger, http, blob, blobTrigger, timerTrigger, queueTrigger, queue", error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_bad_cache_option_is_a_command_line_error()
    {
        var e = Assert.Throws<CommandLineException>(() => StartCommandLine.Parse(["--cache", "maybe"]));

        Assert.Contains("--cache 'maybe' must be on or off", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("65536")]
    [InlineData("http")]
    public void A_port_that_is_not_1_to_65535_is_a_command_line_error(string port)
    {
        // Not even 0: the worker listener takes an ephemeral port too, and the host must tell the two apart.
        var e = Assert.Throws<CommandLineException>(() => StartCommandLine.Parse(["--port", port]));

        Assert.Contains($"--port '{port}' is not a port number (1..65535)", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_start_options_are_read_like_func_start()
    {
        HostSettings settings = StartCommandLine.Parse(["--script-root", "/tmp/app", "--port", "7123", "--cache", "off", "--workers-dir", "/w", "--blob-poll-interval", "0.5"]);

        Assert.Equal("/tmp/app", settings.ScriptRoot);
        Assert.Equal(7123, settings.Port);
        Assert.False(settings.CacheEnabled);
        Assert.Equal("host-7123", settings.InstanceId);
        Assert.Equal("/w", settings.WorkersDirectory);
        Assert.Equal(TimeSpan.FromSeconds(0.5), settings.BlobPollInterval);
    }

    [Fact]
    public async Task Help_on_start_lists_every_option()
    {
        (int code, string output) = await RunMainAsync("start", "--help");

        Assert.Equal(0, code);
        foreach (string option in new[] { "--script-root", "--port", "--cache", "--instance-id", "--workers-dir", "--blob-poll-interval", "--app-name", "--membership", "--peer-port", "--peer-address" })
        {
            Assert.Contains(option, output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task An_unknown_option_is_named_with_the_closest_valid_one_and_exits_with_the_usage_code()
    {
        (int code, string output) = await RunMainAsync("start", "--scirpt-root", "/tmp/app");

        Assert.Equal(Program.UsageError, code);
        Assert.Contains("'--scirpt-root' was not matched", output, StringComparison.Ordinal);
        Assert.Contains("--script-root", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_malformed_value_exits_with_the_usage_code_naming_the_option_and_the_value()
    {
        (int code, string output) = await RunMainAsync("start", "--peer-address", "not-an-ip");

        Assert.Equal(Program.UsageError, code);
        Assert.Contains("--peer-address 'not-an-ip' is not an IP address", output, StringComparison.Ordinal);
    }

    private static async Task<(int Code, string Output)> RunMainAsync(params string[] args)
    {
        await ConsoleGate.WaitAsync();
        TextWriter originalOut = Console.Out;
        TextWriter originalError = Console.Error;
        using var output = new StringWriter();
        try
        {
            Console.SetOut(output);
            Console.SetError(output);
            int code = await Program.Main(args).WaitAsync(TimeSpan.FromSeconds(30));
            return (code, output.ToString());
        }
        finally
        {
            Console.SetOut(originalOut);
            Console.SetError(originalError);
            ConsoleGate.Release();
        }
    }

    private static async Task<(int Code, string Error)> RunStartAsync(params string[] args)
    {
        await ConsoleGate.WaitAsync();
        TextWriter original = Console.Error;
        using var error = new StringWriter();
        try
        {
            Console.SetError(error);
            int code = await StartCommand.RunAsync(StartCommandLine.Parse(args)).WaitAsync(TimeSpan.FromSeconds(30));
            return (code, error.ToString());
        }
        finally
        {
            Console.SetError(original);
            ConsoleGate.Release();
        }
    }
}
