using FaaSCache.Membership.Cli;

namespace FaaSCache.Membership.Tests;

[Trait("Category", "Integration")]
public sealed class MembershipCliTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task The_command_prints_the_members_and_the_owner_of_a_key_by_the_daemons_ring()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var daemons = new[] { "alpha", "bravo", "charlie" }.Select(id => bed.NewDaemon(id, TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15))).ToArray();
        foreach (var daemon in daemons)
        {
            await daemon.StartAsync(CancellationToken.None);
        }

        var (exit, stdout, stderr) = await RunAsync(
            "--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName,
            "--key", "photos/cat.jpg", "--key", "photos/dog.jpg");

        Assert.True(exit == MembershipCli.Ok, stderr);
        Assert.Contains($"app {bed.App}: 3 live member(s) in {bed.ContainerName}/orders-app.json", stdout, StringComparison.Ordinal);
        Assert.Contains("HEARTBEAT AGE", stdout, StringComparison.Ordinal);
        foreach (var daemon in daemons)
        {
            Assert.Contains(daemon.SelfId, stdout, StringComparison.Ordinal);
            Assert.Contains(MembershipTestBed.EndpointOf(daemon.SelfId).ToString(), stdout, StringComparison.Ordinal);
        }

        // The last to join has the full ring from the start (the others see it within a watch interval).
        string owner = daemons[^1].Owners.GetOwner("photos/cat.jpg");
        Assert.Contains($"owner of photos/cat.jpg: {owner} ({MembershipTestBed.EndpointOf(owner)})", stdout, StringComparison.Ordinal);
        Assert.Contains($"owner of photos/dog.jpg: {daemons[^1].Owners.GetOwner("photos/dog.jpg")} ", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_command_run_as_a_process_prints_the_same_owner()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        var b = bed.NewDaemon("b", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        await a.StartAsync(CancellationToken.None);
        await b.StartAsync(CancellationToken.None);

        var (exit, stdout, stderr) = await RunProcessAsync(
            "--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName, "--key", "logs/today.txt");

        Assert.True(exit == 0, $"exit {exit}: {stderr}");
        Assert.Contains($"owner of logs/today.txt: {b.Owners.GetOwner("logs/today.txt")} ", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stale_members_are_shown_as_stale_and_own_nothing()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var longAgo = DateTimeOffset.UtcNow.AddMinutes(-5);
        await bed.NewStore().UpdateAsync(list => list
            .WithMember(new MemberInfo("ghost", MembershipTestBed.EndpointOf("ghost"), longAgo, longAgo))
            .WithMember(new MemberInfo("live", MembershipTestBed.EndpointOf("live"), longAgo, DateTimeOffset.UtcNow)));

        var (exit, stdout, _) = await RunAsync(
            "--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName, "--key", "a/b", "--virtual-nodes", "10");

        Assert.Equal(MembershipCli.Ok, exit);
        Assert.Contains("1 live member(s), 1 stale", stdout, StringComparison.Ordinal);
        Assert.Contains("stale: older than 00:00:15", stdout, StringComparison.Ordinal);
        Assert.Contains("owner of a/b: live (", stdout, StringComparison.Ordinal);
        Assert.Contains("1 members x 10 virtual nodes", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_app_without_a_list_prints_no_members_and_a_key_then_has_no_owner()
    {
        await using var bed = new MembershipTestBed(azurite, output);

        var (listExit, listOut, _) = await RunAsync("--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName);
        var (keyExit, _, keyErr) = await RunAsync("--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName, "--key", "a/b");

        Assert.Equal(MembershipCli.Ok, listExit);
        Assert.Contains("0 live member(s)", listOut, StringComparison.Ordinal);
        Assert.Contains("no such blob yet", listOut, StringComparison.Ordinal);
        Assert.Equal(MembershipCli.Failed, keyExit);
        Assert.Contains("nobody owns a/b", keyErr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_malformed_membership_blob_makes_the_command_fail_naming_the_blob()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        await bed.NewContainerClient().CreateAsync();
        await bed.Blob.UploadAsync(BinaryData.FromString("{\"members\": 42}"));

        var (exit, _, stderr) = await RunAsync("--connection", bed.ConnectionString, "--app", bed.App, "--container", bed.ContainerName);

        Assert.Equal(MembershipCli.Failed, exit);
        Assert.Contains($"'{bed.ContainerName}/orders-app.json'", stderr, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--app", "orders")]
    [InlineData("--connection", "UseDevelopmentStorage=true")]
    [InlineData("--connection", "UseDevelopmentStorage=true", "--app", "orders", "--bogus", "1")]
    [InlineData("--connection", "UseDevelopmentStorage=true", "--app", "orders", "--virtual-nodes", "0")]
    [InlineData("--connection", "UseDevelopmentStorage=true", "--app", "../x")]
    [InlineData("--connection", "UseDevelopmentStorage=true", "--app", "orders", "--container", "Bad_Name")]
    [InlineData("--connection", "UseDevelopmentStorage=true", "--app")]
    public async Task A_wrong_command_line_prints_what_is_wrong_and_exits_with_the_usage_code(params string[] args)
    {
        var saved = Environment.GetEnvironmentVariable("AzureWebJobsStorage");
        Environment.SetEnvironmentVariable("AzureWebJobsStorage", null);
        try
        {
            var (exit, _, stderr) = await RunAsync(args);

            Assert.Equal(MembershipCli.Usage, exit);
            Assert.False(string.IsNullOrWhiteSpace(stderr));
        }
        finally
        {
            Environment.SetEnvironmentVariable("AzureWebJobsStorage", saved);
        }
    }

    [Fact]
    public async Task Help_prints_the_usage()
    {
        var (exit, stdout, _) = await RunAsync("--help");

        Assert.Equal(MembershipCli.Ok, exit);
        Assert.Contains("--key", stdout, StringComparison.Ordinal);
    }

    private async Task<(int Exit, string Stdout, string Stderr)> RunAsync(params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int exit = await MembershipCli.RunAsync(args, stdout, stderr);
        output.WriteLine(stdout.ToString());
        output.WriteLine(stderr.ToString());
        return (exit, stdout.ToString(), stderr.ToString());
    }

    private async Task<(int Exit, string Stdout, string Stderr)> RunProcessAsync(params string[] args)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "faascache-membership.dll"));
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            throw new TimeoutException("The membership command did not exit within 60 s.");
        }

        output.WriteLine(await stdout);
        output.WriteLine(await stderr);
        return (process.ExitCode, await stdout, await stderr);
    }
}
