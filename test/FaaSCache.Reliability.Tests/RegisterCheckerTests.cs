namespace FaaSCache.Reliability.Tests;

/// <summary>
/// The per-key register checker against generated histories (CsCheck generates and shrinks them). CsCheck's own
/// SampleParallel checks an object inside the test process against a model; the suite's histories come from clients of
/// remote host processes, so the recorded history is checked here, Wing &amp; Gong style.
/// </summary>
[Trait("Category", "Unit")]
public sealed class RegisterCheckerTests
{
    private const int Spacing = 10;

    /// <summary>Steps of a sequential register run: write or read, and how far before / after its linearization point the client saw it start / end.</summary>
    private static readonly Gen<(bool Write, int Before, int After)[]> Steps =
        Gen.Select(Gen.Bool, Gen.Int[0, 3 * Spacing], Gen.Int[0, 3 * Spacing]).Array[1, 40];

    [Fact]
    public void Every_history_with_real_time_consistent_linearization_points_is_linearizable_with_no_stale_read_or_lost_write()
    {
        Steps.Sample(steps =>
        {
            (List<RegisterOp> ops, string? last) = Build(steps);
            Assert.True(RegisterChecker.CheckKey([.. ops, FinalRead(last)]).Linearizable);
            Assert.Empty(RegisterChecker.StaleReads(ops));
            Assert.Empty(RegisterChecker.LostWrites(ops, last));
        }, iter: 300);
    }

    [Fact]
    public void A_sequential_history_with_one_read_changed_to_a_value_it_cannot_see_is_not_linearizable()
    {
        Gen<((bool Write, int Before, int After)[] Steps, int Pick)> gen =
            Gen.Select(Gen.Bool, Gen.Int[0, (Spacing / 2) - 1], Gen.Int[0, (Spacing / 2) - 1]).Array[2, 30]
                .Where(s => s.Any(x => !x.Item1) && s.Any(x => x.Item1))
                .SelectMany(s => Gen.Int[0, 1000].Select(pick => (s, pick)));
        gen.Sample(sample =>
        {
            (List<RegisterOp> ops, _) = Build(sample.Steps);
            List<int> reads = [.. ops.Select((o, i) => (o, i)).Where(x => !x.o.IsWrite).Select(x => x.i)];
            int index = reads[sample.Pick % reads.Count];
            RegisterOp read = ops[index];
            // Any other value: one never written, or another write's value (a sequential history allows exactly one).
            string? wrong = read.Value is null ? ops.FirstOrDefault(o => o.IsWrite)?.Value : null;
            ops[index] = read with { Value = wrong };
            Assert.False(RegisterChecker.CheckKey(ops).Linearizable, $"accepted: {string.Join("; ", ops)}");
        }, iter: 300);
    }

    [Fact]
    public void A_read_of_a_value_overwritten_before_it_began_is_stale_and_not_linearizable()
    {
        RegisterOp w1 = Op(true, "a", 0, 10), w2 = Op(true, "b", 20, 30), r = Op(false, "a", 40, 50);
        Assert.Equal([r], RegisterChecker.StaleReads([w1, w2, r]));
        Assert.False(RegisterChecker.CheckKey([w1, w2, r]).Linearizable);
    }

    [Fact]
    public void A_read_concurrent_with_a_write_may_return_the_old_or_the_new_value()
    {
        RegisterOp w1 = Op(true, "a", 0, 10), w2 = Op(true, "b", 20, 60);
        Assert.True(RegisterChecker.CheckKey([w1, w2, Op(false, "a", 30, 40)]).Linearizable);
        Assert.True(RegisterChecker.CheckKey([w1, w2, Op(false, "b", 30, 40)]).Linearizable);
        Assert.False(RegisterChecker.CheckKey([w1, w2, Op(false, "b", 30, 40), Op(false, "a", 45, 50)]).Linearizable);
    }

    [Fact]
    public void A_write_without_an_answer_may_take_effect_late_or_never()
    {
        RegisterOp w1 = Op(true, "a", 0, 10), unknown = Op(true, "b", 20, 30) with { Completed = false };
        Assert.True(RegisterChecker.CheckKey([w1, unknown, Op(false, "a", 40, 50)]).Linearizable);
        Assert.True(RegisterChecker.CheckKey([w1, unknown, Op(false, "b", 100, 110)]).Linearizable);
        Assert.False(RegisterChecker.CheckKey([w1, unknown, Op(false, "b", 40, 50), Op(false, "a", 60, 70)]).Linearizable);
    }

    [Fact]
    public void An_acknowledged_write_missing_from_storage_at_the_end_is_lost()
    {
        RegisterOp w1 = Op(true, "a", 0, 10), w2 = Op(true, "b", 20, 30), w3 = Op(true, "c", 25, 40);
        Assert.Equal([w2, w3], RegisterChecker.LostWrites([w1, w2, w3], "a"));
        Assert.Empty(RegisterChecker.LostWrites([w1, w2, w3], "b"));
        Assert.False(RegisterChecker.CheckKey([w1, w2, w3, FinalRead("a")]).Linearizable);
    }

    private static (List<RegisterOp> Ops, string? Last) Build((bool Write, int Before, int After)[] steps)
    {
        var ops = new List<RegisterOp>();
        string? current = null;
        for (int i = 0; i < steps.Length; i++)
        {
            long point = (i + 1) * 100L;
            (bool write, int before, int after) = steps[i];
            string? value = write ? $"w{i.ToString(CultureInfo.InvariantCulture)}" : current;
            current = write ? value : current;
            ops.Add(new RegisterOp("k", write, value, point - (before * (100 / Spacing)), point + (after * (100 / Spacing)), true, $"c{(i % 3).ToString(CultureInfo.InvariantCulture)}"));
        }

        return (ops, current);
    }

    private static RegisterOp Op(bool write, string? value, long invoked, long returned) => new("k", write, value, invoked, returned, true, "c");

    private static RegisterOp FinalRead(string? value) => new("k", false, value, long.MaxValue - 1, long.MaxValue - 1, true, "storage");
}
