using FaaSCache.Host.Workers;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.Host.Tests.Security;

/// <summary>Issue 31, row 6: the claim of a worker's stream is atomic, so two racing streams for one id cannot both attach.</summary>
[Trait("Category", "Unit")]
public sealed class WorkerChannelClaimTests
{
    [Fact]
    public void Of_many_racing_streams_for_one_worker_id_exactly_one_claims_the_channel()
    {
        var worker = new WorkerDescription { Language = "python", WorkerDirectory = "/w", Extensions = [".py"], DefaultExecutablePath = "python3", DefaultWorkerPath = "worker.py" };
        var app = new FunctionApp
        {
            RootDirectory = "/app",
            Settings = new Dictionary<string, string>(),
            StorageConnection = "UseDevelopmentStorage=true",
            FolderFunctions = [],
            Workers = new Dictionary<string, WorkerDescription> { ["python"] = worker },
        };
        var channel = new WorkerChannel("id", worker, app, index: false, new Dictionary<string, string>(), NullLoggerFactory.Instance);
        // Threads of their own (not the pool's, which starts with one per core) all released by one barrier.
        using var start = new Barrier(16);
        int claimed = 0;
        Thread[] streams = [.. Enumerable.Range(0, 16).Select(_ => new Thread(() =>
        {
            start.SignalAndWait();
            if (channel.TryClaimStream())
            {
                Interlocked.Increment(ref claimed);
            }
        }))];
        foreach (Thread stream in streams)
        {
            stream.Start();
        }

        foreach (Thread stream in streams)
        {
            stream.Join();
        }

        Assert.Equal(1, claimed);
        Assert.False(channel.TryClaimStream());
    }
}
