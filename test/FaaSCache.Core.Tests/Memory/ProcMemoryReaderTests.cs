namespace FaaSCache.Core.Tests.Memory;

[Trait("Category", "Unit")]
public sealed class ProcMemoryReaderTests
{
    private static string Fixture(string name) => Path.Combine(AppContext.BaseDirectory, "Memory", "Fixtures", name);

    private static ProcMemoryReader Reader(string name) => new(Path.Combine(Fixture(name), "proc"), Path.Combine(Fixture(name), "cgroup"));

    [Fact]
    public void A_workers_resident_memory_is_read_from_its_status_file_without_its_shared_memory_pages()
    {
        ProcessMemory? worker = Reader("machine").ReadProcess(4242);

        Assert.NotNull(worker);
        Assert.Equal(512_000L * 1024, worker.Value.ResidentBytes);
        Assert.Equal(102_400L * 1024, worker.Value.SharedMemoryBytes);
        Assert.Equal(409_600L * 1024, worker.Value.PrivateBytes);
    }

    [Fact]
    public void A_process_that_is_gone_reads_as_null()
    {
        Assert.Null(Reader("machine").ReadProcess(999_999));
    }

    [Fact]
    public void The_cgroup_v2_limit_is_the_memory_max_of_the_group_named_in_proc_self_cgroup()
    {
        Assert.Equal(1L << 30, Reader("machine").ReadCgroupLimit());
        Assert.Equal((1L << 30, MemoryLimitSource.Cgroup), Reader("machine").ResolveLimit(null));
    }

    [Theory]
    [InlineData("unlimited")] // memory.max says "max"
    [InlineData("v1")] // no cgroup v2 line at all
    public void Without_a_cgroup_v2_limit_the_machines_memory_is_the_limit(string fixture)
    {
        ProcMemoryReader reader = Reader(fixture);

        Assert.Null(reader.ReadCgroupLimit());
        Assert.Equal((8_039_676L * 1024, MemoryLimitSource.Machine), reader.ResolveLimit(null));
    }

    [Fact]
    public void A_configured_limit_wins_over_the_cgroup()
    {
        Assert.Equal((256L << 20, MemoryLimitSource.Configured), Reader("machine").ResolveLimit(256L << 20));
    }

    [Fact]
    public void This_process_reads_from_the_real_proc_with_a_positive_resident_size()
    {
        ProcessMemory? self = new ProcMemoryReader().ReadProcess(Environment.ProcessId);

        Assert.NotNull(self);
        Assert.True(self.Value.ResidentBytes > 0);
        Assert.True(new ProcMemoryReader().ReadMachineTotal() > 0);
    }
}
