namespace FaaSCache.Core.Tests.Caching;

/// <summary>The fill of a map through its file (pwrite): what lands, where, and what a short stream leaves.</summary>
[Trait("Category", "Unit")]
public sealed class StreamCopyTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(StreamCopy.StagingBufferSize)]
    [InlineData((3 * StreamCopy.StagingBufferSize) + 12_345)]
    public async Task A_fill_through_the_file_is_what_the_mapping_and_the_file_hold(int length)
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("fill", [root.Path]);
        byte[] data = RandomBytes(length, seed: length);
        using SharedMemoryMap map = store.Create(length);

        long copied = await StreamCopy.FillAsync(new TrickleStream(data), map, CancellationToken.None);

        Assert.Equal(length, copied);
        Assert.True(map.Content.SequenceEqual(data));
        byte[] file = await File.ReadAllBytesAsync(map.FilePath);
        Assert.Equal(1, file[0]);
        Assert.Equal(length, BitConverter.ToInt64(file, 1));
        Assert.True(file.AsSpan(SharedMemoryMap.HeaderSize).SequenceEqual(data));
    }

    [Fact]
    public async Task A_stream_that_ends_early_fails_the_fill_naming_how_far_it_got()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("short", [root.Path]);
        using SharedMemoryMap map = store.Create(1000);

        var e = await Assert.ThrowsAsync<IOException>(() => StreamCopy.FillAsync(new TrickleStream(new byte[600]), map, CancellationToken.None));

        Assert.Contains("after 600 of 1000 bytes", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_follower_sees_every_advance_up_to_the_whole_object()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("follow", [root.Path]);
        int length = (2 * StreamCopy.StagingBufferSize) + 1;
        byte[] data = RandomBytes(length, seed: 7);
        using SharedMemoryMap map = store.Create(length);
        var progress = new FillProgress(map, "\"v1\"");

        await StreamCopy.FillAsync(new TrickleStream(data), map, CancellationToken.None, progress);

        Assert.Equal(length, await progress.WaitAsync(0, CancellationToken.None));
        Assert.True(progress.Content.Span.SequenceEqual(data));
    }

    [Fact]
    public void A_write_past_the_content_is_refused()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("bounds", [root.Path]);
        using SharedMemoryMap map = store.Create(10);

        Assert.Throws<ArgumentOutOfRangeException>(() => map.Write(new byte[4], 7));
        Assert.Throws<ArgumentOutOfRangeException>(() => map.Write(new byte[1], -1));
        map.Write(new byte[] { 1, 2, 3 }, 7);
        Assert.Equal(new byte[] { 0, 0, 0, 0, 0, 0, 0, 1, 2, 3 }, map.Content.ToArray());
    }

    private static byte[] RandomBytes(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    /// <summary>A stream that hands out its bytes in uneven pieces (1 byte up to 100 KB), as a socket does.</summary>
    private sealed class TrickleStream(byte[] data) : Stream
    {
        private readonly Random _sizes = new(42);
        private int _position;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => data.Length;

        public override long Position
        {
            get => _position;
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count)
        {
            int n = Math.Min(Math.Min(count, _sizes.Next(1, 100_000)), data.Length - _position);
            data.AsSpan(_position, n).CopyTo(buffer.AsSpan(offset));
            _position += n;
            return n;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
