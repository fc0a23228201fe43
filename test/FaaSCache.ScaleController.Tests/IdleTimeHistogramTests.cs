using FaaSCache.Prewarm;

namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class IdleTimeHistogramTests
{
    [Fact]
    public void Counts_idle_times_into_minute_bins_and_beyond_the_range_as_out_of_bounds()
    {
        var histogram = new IdleTimeHistogram(TimeSpan.FromMinutes(1), 240);

        histogram.Add(TimeSpan.FromSeconds(59));
        histogram.Add(TimeSpan.FromSeconds(60));
        histogram.Add(TimeSpan.FromHours(4) - TimeSpan.FromTicks(1));
        histogram.Add(TimeSpan.FromHours(4));

        Assert.Equal((1, 1, 1), (histogram.Counts[0], histogram.Counts[1], histogram.Counts[239]));
        Assert.Equal((3, 1), (histogram.InRange, histogram.OutOfBounds));
        Assert.Equal([TimeSpan.FromHours(4)], histogram.RecentOutOfBounds);
    }

    [Fact]
    public void Keeps_only_the_last_eight_out_of_bounds_idle_times()
    {
        var histogram = new IdleTimeHistogram(TimeSpan.FromMinutes(1), 240);
        for (int i = 1; i <= 10; i++)
        {
            histogram.Add(TimeSpan.FromHours(4 + i));
        }

        Assert.Equal(10, histogram.OutOfBounds);
        Assert.Equal(Enumerable.Range(3, 8).Select(h => TimeSpan.FromHours(4 + h)), histogram.RecentOutOfBounds);
    }

    [Fact]
    public void Halves_every_count_when_a_bin_would_overflow_sixteen_bits()
    {
        var histogram = new IdleTimeHistogram(TimeSpan.FromMinutes(1), 4);
        histogram.Add(TimeSpan.FromMinutes(1.5));
        histogram.Add(TimeSpan.FromMinutes(1.5));
        histogram.Add(TimeSpan.FromHours(1));
        histogram.Add(TimeSpan.FromHours(1));
        for (int i = 0; i < ushort.MaxValue; i++)
        {
            histogram.Add(TimeSpan.FromMinutes(0.5));
        }

        histogram.Add(TimeSpan.FromMinutes(0.5)); // the 65536th: everything is halved first

        Assert.Equal(32768, histogram.Counts[0]);
        Assert.Equal(1, histogram.Counts[1]);
        Assert.Equal(1, histogram.OutOfBounds);
        Assert.Equal(32769, histogram.InRange);
    }

    [Fact]
    public void The_stored_state_round_trips_in_about_one_kilobyte()
    {
        var histogram = new IdleTimeHistogram(TimeSpan.FromMinutes(1), 240);
        for (int i = 0; i < 240; i++)
        {
            for (int n = 0; n <= i % 7; n++)
            {
                histogram.Add(TimeSpan.FromMinutes(i + 0.5));
            }
        }

        for (int i = 0; i < 9; i++)
        {
            histogram.Add(TimeSpan.FromHours(5) + TimeSpan.FromSeconds(i * 123.4));
        }

        byte[] json = HistogramState.From(histogram).ToJson();
        var restored = new IdleTimeHistogram(TimeSpan.FromMinutes(1), 240);
        HistogramState.Parse(json).RestoreInto(restored);

        Assert.Equal(histogram.Counts.ToArray(), restored.Counts.ToArray());
        Assert.Equal((histogram.InRange, histogram.OutOfBounds), (restored.InRange, restored.OutOfBounds));
        Assert.Equal(histogram.RecentOutOfBounds, restored.RecentOutOfBounds);
        Assert.InRange(json.Length, 640, 1024); // 640 base64 characters of bins, plus the out-of-bounds idle times
    }

    [Fact]
    public void A_state_of_other_bins_is_refused_with_both_shapes()
    {
        byte[] json = HistogramState.From(new IdleTimeHistogram(TimeSpan.FromMinutes(1), 240)).ToJson();

        FormatException e = Assert.Throws<FormatException>(() => HistogramState.Parse(json).RestoreInto(new IdleTimeHistogram(TimeSpan.FromSeconds(1), 240)));

        Assert.Contains("240 bins of 60000 ms", e.Message, StringComparison.Ordinal);
        Assert.Throws<FormatException>(() => HistogramState.Parse("{\"v\":2}"u8));
        Assert.Throws<FormatException>(() => HistogramState.Parse("not json"u8));
    }
}
