using System.Text.RegularExpressions;

namespace FaaSCache.Host.Tests.Cluster;

/// <summary><c>scripts/cluster.sh</c>: start N instances of an app on one Azurite, show them, stop them all, leave nothing behind.</summary>
[Trait("Category", "Cluster")]
public sealed partial class ClusterScriptTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(180);

    [Fact]
    public async Task The_script_starts_three_instances_that_join_one_list_shows_them_and_stops_them_all_leaving_no_process_and_no_map()
    {
        var app = ClusterApp.Create("strong");
        using FunctionAppFolder folder = app.Build();
        using var clusterDir = new TempFolder("faascache-cluster-script-");
        string stateFile = Path.Combine(clusterDir.Path, "state");
        string appName = Path.GetFileName(folder.Path);
        List<int> pids = [];
        try
        {
            ScriptRun start = await RunAsync(clusterDir.Path, StartTimeout, "start", "3", folder.Path);
            Assert.True(start.ExitCode == 0, start.ToString());
            Assert.True(File.Exists(stateFile), $"no state file{Environment.NewLine}{start}");
            pids = [.. StatePids(stateFile)];
            Assert.Equal(3, pids.Count);
            for (int i = 1; i <= 3; i++)
            {
                Assert.Matches($@"(?m)^  {Regex.Escape(appName)}-{i} +pid \d+ +http http://127\.0\.0\.1:\d+/  peer http://127\.0\.0\.1:\d+/$", start.Output);
            }

            Assert.Contains("members (3)", start.Output, StringComparison.Ordinal);
            // The storage it uses is printed, so the user can seed and read it (the README's flow).
            Assert.Contains($"export AzureWebJobsStorage='{azurite.ConnectionString}'", start.Output, StringComparison.Ordinal);

            ScriptRun status = await RunAsync(clusterDir.Path, TimeSpan.FromSeconds(60), "status");
            Assert.True(status.ExitCode == 0, status.ToString());
            Assert.Equal(3, UpLine().Count(status.Output));
            Assert.Contains("3 of 3 instance(s) up", status.Output, StringComparison.Ordinal);
            Assert.Contains("members (3)", status.Output, StringComparison.Ordinal);
            string[] shmRoots = [.. Regex.Matches(File.ReadAllText(stateFile), @"/dev/shm/faascache-cluster\.\w+/[^ )]+").Select(m => m.Value)];
            Assert.Equal(3, shmRoots.Length);

            ScriptRun stop = await RunAsync(clusterDir.Path, TimeSpan.FromSeconds(90), "stop");
            Assert.True(stop.ExitCode == 0, stop.ToString());
            Assert.Contains("stopped 3 instance(s)", stop.Output, StringComparison.Ordinal);
            Assert.Contains("no host or worker process and no shared-memory map left", stop.Output, StringComparison.Ordinal);
            Assert.All(pids, p => Assert.False(IsRunning(p), $"host pid {p} still runs"));
            Assert.All(shmRoots, r => Assert.False(Directory.Exists(r), $"{r} is still there"));
            Assert.False(File.Exists(stateFile), "the state file is still there");
        }
        finally
        {
            if (File.Exists(stateFile))
            {
                ScriptRun cleanup = await RunAsync(clusterDir.Path, TimeSpan.FromSeconds(90), "stop");
                output.WriteLine($"cleanup: {cleanup}");
                pids.AddRange(StatePids(stateFile));
            }

            foreach (int pid in pids.Where(IsRunning))
            {
                try
                {
                    using Process host = Process.GetProcessById(pid);
                    ProcessTree.Kill(host);
                }
                catch (ArgumentException)
                {
                    // Gone.
                }
            }
        }
    }

    [Theory]
    [InlineData("exit 2: a command is needed")]
    [InlineData("exit 2: unknown command 'begin'", "begin")]
    [InlineData("exit 2: start needs the number of instances and the app folder", "start", "3")]
    [InlineData("exit 2: the number of instances must be 1..32, not 'three'", "start", "three", ".")]
    [InlineData("exit 2: --consistency must be one of", "start", "3", "samples/amber-alert", "--consistency", "eventual")]
    [InlineData("exit 2: '/nonexistent' is not a function app folder", "start", "3", "/nonexistent")]
    [InlineData("exit 1: no cluster is recorded", "status")]
    public async Task Wrong_arguments_or_no_cluster_print_what_is_wrong_and_the_usage(string expected, params string[] args)
    {
        using var clusterDir = new TempFolder("faascache-cluster-script-");
        ScriptRun run = await RunAsync(clusterDir.Path, TimeSpan.FromSeconds(30), args);

        string[] parts = expected.Split(": ", 2);
        Assert.True(run.ExitCode == int.Parse(parts[0]["exit ".Length..], CultureInfo.InvariantCulture), run.ToString());
        Assert.Contains(parts[1], run.Output, StringComparison.Ordinal);
        if (run.ExitCode == 2)
        {
            Assert.Contains("usage: scripts/cluster.sh start <N> <app folder>", run.Output, StringComparison.Ordinal);
        }
    }

    private async Task<ScriptRun> RunAsync(string clusterDir, TimeSpan timeout, params string[] args)
    {
        string root = RepositoryRoot.Find();
        var start = new ProcessStartInfo("bash")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = root,
        };
        start.ArgumentList.Add(Path.Combine(root, "scripts", "cluster.sh"));
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["AzureWebJobsStorage"] = azurite.ConnectionString;
        start.Environment[FaaSCacheHostProcess.HostDllVariable] = FaaSCacheHostProcess.FindHostDll();
        start.Environment["FAASCACHE_TOOL_DLL"] = FaaSCacheHostProcess.FindToolDll();
        start.Environment["FAASCACHE_CLUSTER_DIR"] = clusterDir;
        using Process process = Process.Start(start)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            ProcessTree.Kill(process);
            throw new TimeoutException($"scripts/cluster.sh {string.Join(' ', args)} did not finish within {timeout.TotalSeconds:0} s.");
        }

        var run = new ScriptRun(string.Join(' ', args), process.ExitCode, await stdout + await stderr);
        output.WriteLine(run.ToString());
        return run;
    }

    /// <summary>True while <paramref name="pid"/> runs: not gone, and not a zombie (the hosts outlive the script that started them, so nobody may reap them at once).</summary>
    private static bool IsRunning(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..].FirstOrDefault() is not ('Z' or 'X');
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    private static IEnumerable<int> StatePids(string stateFile)
    {
        Match pids = Regex.Match(File.ReadAllText(stateFile), @"(?m)^PIDS ([\d ]*)$");
        return pids.Success
            ? pids.Groups[1].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(p => int.Parse(p, CultureInfo.InvariantCulture))
            : [];
    }

    [GeneratedRegex(@"(?m)^  \S+ +pid \d+ +up, peer http://127\.0\.0\.1:\d+/, 3 member\(s\)")]
    private static partial Regex UpLine();

    private sealed record ScriptRun(string Command, int ExitCode, string Output)
    {
        public override string ToString() => $"$ scripts/cluster.sh {Command} (exit {ExitCode}){Environment.NewLine}{Output}";
    }
}
