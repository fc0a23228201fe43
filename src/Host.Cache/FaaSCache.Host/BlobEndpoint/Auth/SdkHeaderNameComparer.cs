namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// The order in which the SDKs sort x-ms-* header names: the service's en-US collation with symbols ignored
/// at first (so "x-ms-meta-k_1" comes before "x-ms-meta-k1", unlike ordinal order). Three passes over ASCII:
/// letters, digits and the weighed symbols; then case; then where the ignored ' and - stand.
/// </summary>
internal sealed class SdkHeaderNameComparer : IComparer<string>
{
    /// <summary>The one instance (the comparer has no state).</summary>
    public static readonly SdkHeaderNameComparer Instance = new();

    // Ascending first-pass order of the characters that count; every other ASCII character is ignored.
    private const string Weighed = "!#$%&*.^_`|~+0123456789abcdefghijklmnopqrstuvwxyz";

    public int Compare(string? x, string? y)
    {
        if (ReferenceEquals(x, y))
        {
            return 0;
        }

        if (x is null || y is null)
        {
            return x is null ? -1 : 1;
        }

        int result = ComparePass(x, y, FirstPassWeight);
        if (result == 0)
        {
            result = ComparePass(x, y, c => c is >= 'A' and <= 'Z' ? 1 : 0);
        }

        return result != 0 ? result : CompareIgnoredSymbols(x, y);
    }

    private static int FirstPassWeight(char c)
    {
        if (c >= 128)
        {
            return Weighed.Length + c; // not in header names; after everything, never thrown on
        }

        int index = Weighed.IndexOf(char.ToLowerInvariant(c), StringComparison.Ordinal);
        return index + 1; // 0 = ignored
    }

    // Compares the sequences of non-zero weights; a sequence that ends first sorts first.
    private static int ComparePass(string x, string y, Func<char, int> weight)
    {
        int i = 0, j = 0;
        while (true)
        {
            int wx = 0, wy = 0;
            while (i < x.Length && (wx = weight(x[i])) == 0)
            {
                i++;
            }

            while (j < y.Length && (wy = weight(y[j])) == 0)
            {
                j++;
            }

            bool xEnded = i >= x.Length, yEnded = j >= y.Length;
            if (xEnded || yEnded)
            {
                return xEnded == yEnded ? 0 : xEnded ? -1 : 1;
            }

            if (wx != wy)
            {
                return wx < wy ? -1 : 1;
            }

            i++;
            j++;
        }
    }

    // Last pass, as the SDK's table does it: walk both names together; the first place where one has an
    // ignored symbol and the other has not decides (the name whose symbol comes later sorts first), and
    // ' sorts before -.
    private static int CompareIgnoredSymbols(string x, string y)
    {
        static int SymbolWeight(char c) => c switch { '\'' => 2, '-' => 3, _ => 0 };

        for (int k = 0; ; k++)
        {
            int wx = k < x.Length ? SymbolWeight(x[k]) : 1;
            int wy = k < y.Length ? SymbolWeight(y[k]) : 1;
            if (wx == 1 && wy == 1)
            {
                return 0;
            }

            if (wx != wy)
            {
                return wx == 0 ? -1 : wy == 0 ? 1 : wx - wy;
            }
        }
    }
}
