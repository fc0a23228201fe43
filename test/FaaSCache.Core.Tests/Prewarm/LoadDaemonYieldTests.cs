namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>§3.3: pre-warm runs only while no invocation executes, and a cold-start invocation's inputs come first.</summary>
[Trait("Category", "Unit")]
public sealed class LoadDaemonYieldTests
{
    private const int KiB = 1024;

    [Fact]
    public async Task Prewarm_waits_while_a_cold_start_invocation_runs_and_its_inputs_load_first()
    {
        await using var h = new PrewarmHarness();
        (string, long, string?)[] models = await SeedModelsAsync(h);
        await h.UploadAsync("input", KiB, seed: 9);
        var gate = new InvocationGate();
        RecordingBlobStore? recording = null;
        PrewarmHarness.Instance i = h.CreateInstance("i-a", invocations: gate, wrapStorage: s => recording = new RecordingBlobStore(s));

        IDisposable invocation = gate.Start();
        Task<LoadDaemonStatus> run = i.Daemon.RunAsync();

        Assert.False(run.IsCompleted);
        Assert.Equal("paused", i.Daemon.Status().State);
        using (ObjectLease input = await i.Cachelet.ReadAsync(h.Key("input")))
        {
            Assert.Equal(ReadSource.LocalMiss, input.Source);
        }

        Assert.Equal([h.Key("input")], recording!.Fetches);
        Assert.Equal(0, i.Daemon.Status().Loaded);
        invocation.Dispose();
        LoadDaemonStatus status = await run;

        Assert.Equal("done", status.State);
        Assert.Equal(1, status.Pauses);
        Assert.Equal(h.Key("input"), recording.Fetches[0]);
        Assert.Equal(models.Select(m => m.Item1).Order(StringComparer.Ordinal), recording.Fetches.Skip(1).Order(StringComparer.Ordinal));
        Assert.Equal(3, status.Loaded);
    }

    [Fact]
    public async Task An_invocation_that_starts_mid_load_interrupts_it_and_the_load_resumes_afterward()
    {
        await using var h = new PrewarmHarness();
        (string, long, string?)[] models = await SeedModelsAsync(h);
        await h.UploadAsync("input", KiB, seed: 9);
        var gate = new InvocationGate();
        RecordingBlobStore? recording = null;
        PrewarmHarness.Instance i = h.CreateInstance("i-a", invocations: gate, wrapStorage: s => recording = new RecordingBlobStore(s) { HoldFirstFetchOf = models[0].Item1 });
        var paused = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        i.Daemon.Paused += (_, _) => paused.TrySetResult();

        Task<LoadDaemonStatus> run = i.Daemon.RunAsync();
        await recording!.HeldFetchStarted.Task;
        IDisposable invocation = gate.Start();
        await paused.Task;

        // The interrupted download left nothing behind; the invocation's input goes next.
        Assert.False(i.Cachelet.Contains(models[0].Item1));
        Assert.Equal(0, i.Cachelet.BytesCached);
        (await i.Cachelet.ReadAsync(h.Key("input"))).Dispose();
        Assert.Equal([models[0].Item1, h.Key("input")], recording.Fetches);
        invocation.Dispose();
        LoadDaemonStatus status = await run;

        Assert.Equal(3, status.Loaded);
        Assert.Equal(1, status.Pauses);
        Assert.Equal(models[0].Item1, recording.Fetches[2]);
        Assert.All(models, m => Assert.True(i.Cachelet.Contains(m.Item1)));
    }

    [Fact]
    public async Task A_read_of_a_key_being_prewarmed_waits_for_that_load_instead_of_downloading_twice()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("model", 16 * KiB);
        PrewarmHarness.Instance i = h.CreateInstance("i-a");

        Task<PrewarmLoadResult> load = i.Cachelet.PrewarmAsync(h.Key("model"));
        using ObjectLease lease = await i.Cachelet.ReadAsync(h.Key("model"));
        PrewarmLoadResult result = await load;

        Assert.Equal(PrewarmLoadOutcome.Loaded, result.Outcome);
        Assert.Equal(ReadSource.LocalHit, lease.Source);
        Assert.Equal(1, h.Storage.BodiesServed);
    }

    private static async Task<(string, long, string?)[]> SeedModelsAsync(PrewarmHarness h)
    {
        var models = new List<(string, long, string?)>();
        for (int n = 0; n < 3; n++)
        {
            // Distinct sizes: the load order (largest benefit first) is known.
            long size = (3 - n) * 8 * KiB;
            models.Add((h.Key($"model-{n}"), size, await h.UploadAsync($"model-{n}", (int)size, seed: n)));
        }

        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", [.. models]);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", [.. models]);
        return [.. models];
    }
}
