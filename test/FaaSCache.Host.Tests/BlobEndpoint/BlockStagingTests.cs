using FaaSCache.Host.BlobEndpoint;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// The SDK endpoint's uncommitted blocks. Found by a failed run of SdkEndpointWriteTests ("The specified block list is
/// invalid" on a parallel block upload): a blob's first block could land in an entry that a concurrent stale sweep had
/// already dropped, so its Put Block List found the block missing.
/// </summary>
[Trait("Category", "Unit")]
public sealed class BlockStagingTests
{
    [Fact]
    public void A_block_staged_while_another_upload_sweeps_stale_blobs_is_found_by_the_commit()
    {
        var time = new SweepingClock();
        var staging = new BlockStaging(1 << 20, time);
        // The sweep of a concurrent Put Block (another blob) runs while the first block of "c/a" is being staged.
        time.During = () => staging.TryStage("c/other", "b", [9]);

        Assert.True(staging.TryStage("c/a", "block-1", [1, 2, 3]));

        (IReadOnlyList<ResolvedBlock>? blocks, _) = staging.Resolve("c/a", [new BlockListEntry(BlockListSection.Latest, "block-1")]);
        Assert.NotNull(blocks);
        Assert.Equal([1, 2, 3], Assert.Single(blocks).Staged);
    }

    /// <summary>A clock that runs <see cref="During"/> once, the second time it is read (inside the first Put Block).</summary>
    private sealed class SweepingClock : TimeProvider
    {
        private int _reads;

        public Action? During { get; set; }

        public override DateTimeOffset GetUtcNow()
        {
            if (++_reads == 2 && During is { } during)
            {
                During = null;
                during();
            }

            return new DateTimeOffset(2026, 11, 29, 12, 0, 0, TimeSpan.Zero);
        }
    }
}
