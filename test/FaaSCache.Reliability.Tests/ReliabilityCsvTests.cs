namespace FaaSCache.Reliability.Tests;

/// <summary>reliability.csv stays machine-readable: one header and ten fields per line, whatever a scenario is called.</summary>
[Trait("Category", "Unit")]
public sealed class ReliabilityCsvTests
{
    [Theory]
    [InlineData("history-owner", "history-owner,")]
    [InlineData("slow-peer-link (owner, tbf 4 MB/s)", "\"slow-peer-link (owner, tbf 4 MB/s)\",")]
    [InlineData("a \"quoted\" name", "\"a \"\"quoted\"\" name\",")]
    public void A_scenario_with_a_comma_or_a_quote_is_quoted_so_the_line_keeps_ten_fields(string scenario, string start)
    {
        string line = new ReliabilityRow(scenario).ToCsv();

        Assert.StartsWith(start, line, StringComparison.Ordinal);
        Assert.Equal(ReliabilityRow.CsvHeader.Split(',').Length - 1, line[start.Length..].Split(',').Length);
    }
}
