using System.Net.Sockets;

namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>The addresses a SAS's signed IP (<c>sip</c>) allows: one address, or a range <c>low-high</c> of one family.</summary>
/// <param name="Low">The first address allowed.</param>
/// <param name="High">The last address allowed.</param>
internal readonly record struct SasIpRange(IPAddress Low, IPAddress High)
{
    /// <summary>Reads <c>a.b.c.d</c> or <c>low-high</c>; false when an end is not an address or the ends' families differ.</summary>
    public static bool TryParse(string range, out SasIpRange parsed)
    {
        parsed = new(IPAddress.None, IPAddress.None);
        string[] ends = range.Split('-', StringSplitOptions.TrimEntries);
        if (ends.Length is < 1 or > 2
            || !IPAddress.TryParse(ends[0], out IPAddress? first)
            || !IPAddress.TryParse(ends[^1], out IPAddress? last))
        {
            return false;
        }

        parsed = new(Normalize(first), Normalize(last));
        return parsed.Low.AddressFamily == parsed.High.AddressFamily;
    }

    /// <summary>Whether <paramref name="address"/> lies between <see cref="Low"/> and <see cref="High"/>, both included.</summary>
    public bool Contains(IPAddress address)
    {
        address = Normalize(address);
        if (address.AddressFamily != Low.AddressFamily)
        {
            return false;
        }

        ReadOnlySpan<byte> value = address.GetAddressBytes();
        return value.SequenceCompareTo(Low.GetAddressBytes()) >= 0 && value.SequenceCompareTo(High.GetAddressBytes()) <= 0;
    }

    // A v4 client on a dual-stack socket shows up as ::ffff:a.b.c.d.
    private static IPAddress Normalize(IPAddress address) =>
        address.AddressFamily == AddressFamily.InterNetworkV6 && address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
}
