using System.Globalization;
using System.Text.RegularExpressions;

namespace FaaSCache.Core.Tests.Documentation;

/// <summary>
/// A table of measured numbers in the docs says which CSV it comes from, on the line before it:
/// <c>&lt;!-- numbers from benchmarks/results/prewarm.csv; derived: faster by, paper --&gt;</c>. Every number in such a
/// table must be a value of that CSV as the table rounds it, except in the columns named <c>derived</c> (ratios,
/// percentages, the paper's figures) and percentages anywhere: so a rerun of a benchmark that changes its CSV and not
/// the page (or the other way round) fails here, naming the cell.
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class DocumentedNumbersTests
{
    private static readonly string Root = RepositoryRoot.Find();

    /// <summary>The pages whose tables of measured numbers are held to their CSVs (at least these; any page may add a marker).</summary>
    private static readonly string[] Required = ["docs/prewarm-and-memory.md", "benchmarks/README.md"];

    /// <summary>The same pages as <see cref="DocumentationLinkTests"/>.</summary>
    public static TheoryData<string> Pages() => DocumentationLinkTests.Pages();

    [Fact]
    public void The_pages_that_quote_benchmark_tables_mark_them()
    {
        foreach (string page in Required)
        {
            Assert.True(Marker().IsMatch(File.ReadAllText(Path.Combine(Root, page))), $"{page} has no '<!-- numbers from benchmarks/results/<name>.csv -->' table");
        }
    }

    [Theory]
    [MemberData(nameof(Pages))]
    public void Every_number_of_a_marked_table_is_a_value_of_its_csv(string page)
    {
        string[] lines = File.ReadAllLines(Path.Combine(Root, page));
        var wrong = new List<string>();
        for (int i = 0; i < lines.Length; i++)
        {
            Match marker = Marker().Match(lines[i]);
            if (!marker.Success)
            {
                continue;
            }

            string csv = marker.Groups["csv"].Value;
            string csvPath = Path.Combine(Root, csv);
            Assert.True(File.Exists(csvPath), $"{page}:{i + 1} names {csv}, which does not exist");
            string[] derived = marker.Groups["derived"].Success
                ? [.. marker.Groups["derived"].Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)]
                : [];
            double[] values = [.. File.ReadAllLines(csvPath).Skip(1).SelectMany(l => l.Split(',')).Select(Parse).OfType<double>()];
            List<string[]> table = [.. lines.Skip(i + 1).SkipWhile(string.IsNullOrWhiteSpace).TakeWhile(l => l.StartsWith('|')).Select(Cells)];
            Assert.True(table.Count > 2, $"{page}:{i + 1}: the marker is not followed by a table");
            string[] header = table[0];
            foreach (string[] row in table.Skip(2))
            {
                for (int c = 0; c < row.Length; c++)
                {
                    string column = c < header.Length ? header[c] : string.Empty;
                    if (row[c].Contains('%', StringComparison.Ordinal) || derived.Any(d => column.Contains(d, StringComparison.OrdinalIgnoreCase)))
                    {
                        continue;
                    }

                    foreach (Match number in Number().Matches(row[c]))
                    {
                        string text = number.Value.Replace(",", string.Empty, StringComparison.Ordinal);
                        double shown = double.Parse(text, CultureInfo.InvariantCulture);
                        int decimals = text.Contains('.', StringComparison.Ordinal) ? text.Length - text.IndexOf('.', StringComparison.Ordinal) - 1 : 0;
                        double half = 0.5 * Math.Pow(10, -decimals) + 1e-9;
                        if (!values.Any(v => Math.Abs(v - shown) <= half))
                        {
                            wrong.Add($"{page}:{i + 1}: '{number.Value}' in column '{column}' (row '{row[0]}') is no value of {csv}");
                        }
                    }
                }
            }
        }

        Assert.True(wrong.Count == 0, string.Join(Environment.NewLine, wrong));
    }

    private static double? Parse(string field) => double.TryParse(field, NumberStyles.Float, CultureInfo.InvariantCulture, out double v) ? v : null;

    private static string[] Cells(string row) => [.. row.Trim().Trim('|').Split('|').Select(c => c.Trim())];

    [GeneratedRegex(@"<!--\s*numbers from (?<csv>benchmarks/results/[\w.-]+\.csv)(;\s*derived:\s*(?<derived>[^>]*?))?\s*-->")]
    private static partial Regex Marker();

    [GeneratedRegex(@"(?<![\w.])\d{1,3}(,\d{3})+(\.\d+)?(?![\w.])|(?<![\w.,])\d+(\.\d+)?(?![\w.,])")]
    private static partial Regex Number();
}
