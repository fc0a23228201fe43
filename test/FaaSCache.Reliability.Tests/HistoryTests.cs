namespace FaaSCache.Reliability.Tests;

/// <summary>
/// Each preset's concurrent history on 3 host processes with one SIGKILLed half-way (the reliability benchmark's quick
/// mode): <c>strong</c> and <c>owner</c> are linearizable per key and lose no acknowledged write; the weaker presets'
/// anomalies are counted and printed, never a partial read, never a leaked map or process.
/// </summary>
[Trait("Category", "Reliability")]
public sealed class HistoryTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests, IDisposable
{
    private readonly TestOutputWriter _log = new(output);

    [Theory]
    [EveryPreset]
    public async Task A_concurrent_history_with_a_killed_instance_has_only_the_anomalies_its_preset_allows(string preset)
    {
        ReliabilityRow row = await ReliabilityHistories.RunAsync(azurite.Server, preset, ReliabilitySuite.Quick.HistoryOpsPerClient, 13, _log, CancellationToken.None);
        foreach (string note in row.Notes)
        {
            output.WriteLine(note);
        }

        output.WriteLine(ReliabilityRow.CsvHeader);
        output.WriteLine(row.ToCsv());
        Assert.Empty(ReliabilitySuite.Failures([row]));
        Assert.True(row.WritesAcked > 0, $"no write was acknowledged under {preset}");
        Assert.True(row.Ops >= 6 * ReliabilitySuite.Quick.HistoryOpsPerClient, row.Ops.ToString(CultureInfo.InvariantCulture));
    }

    public void Dispose() => _log.Dispose();
}
