using FaaSCache.Host.Triggers;
using FaaSCache.Host.Workers;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Tests.Security;

/// <summary>Which workers get blob inputs in shared memory, and the blobs webhook's subjects.</summary>
[Trait("Category", "Unit")]
public sealed class WorkerSharedMemoryTests
{
    private static readonly Dictionary<string, string> Advertises = new() { ["SharedMemoryDataTransfer"] = "true" };

    [Theory]
    [InlineData("python", "3.11", "4.34.0", true)]
    [InlineData("python", "3.12", "4.40.0", true)]
    [InlineData("python", "3.13", "1.0.0", false)]
    [InlineData("python", "3.14", "1.1.0", false)]
    [InlineData("node", "20.20.2", "3.9.0", true)]
    public void A_worker_that_advertises_shared_memory_gets_it_unless_it_is_the_python_library_runtime_that_cannot_read_it(string runtime, string version, string worker, bool reads)
    {
        (bool actual, string? why) = WorkerSharedMemory.Decide(Advertises, new WorkerMetadata { RuntimeName = runtime, RuntimeVersion = version, WorkerVersion = worker });

        Assert.Equal(reads, actual);
        Assert.Equal(reads, why is null);
    }

    [Fact]
    public void A_worker_that_does_not_advertise_it_never_gets_it()
    {
        Assert.False(WorkerSharedMemory.Decide(new Dictionary<string, string>(), null).Reads);
        Assert.False(WorkerSharedMemory.Decide(new Dictionary<string, string> { ["SharedMemoryDataTransfer"] = "false" }, null).Reads);
    }

    [Theory]
    [InlineData("/blobServices/default/containers/photos/blobs/a/b.jpg", "photos/a/b.jpg")]
    [InlineData("/blobServices/default/containers/photos/blobs/", null)]
    [InlineData("/blobServices/default/containers/photos", null)]
    [InlineData("photos/a.jpg", null)]
    public void A_storage_event_subject_names_its_blob(string subject, string? key)
        => Assert.Equal(key, BlobWebhookEndpoints.KeyOfSubject(subject));
}
