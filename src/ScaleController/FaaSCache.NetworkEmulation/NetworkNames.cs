using System.Text.RegularExpressions;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// The names and addresses of one emulated link: namespace <c>&lt;prefix&gt;-&lt;index&gt;</c>, veth ends
/// <c>&lt;prefix&gt;v&lt;index&gt;a</c> (root) and <c>...b</c> (namespace), the ifb device <c>...i</c> that carries the
/// root end's ingress through a qdisc, and the /30 <c>10.250.&lt;index&gt;.0</c>.
/// </summary>
internal sealed partial record NetworkNames(string Prefix, int Index)
{
    /// <summary>Linux interface names are at most 15 characters (IFNAMSIZ 16 with the terminating NUL).</summary>
    public const int MaxInterfaceNameLength = 15;

    /// <summary>The highest index: it is the third octet of the link's addresses.</summary>
    public const int MaxIndex = 255;

    public string Namespace => $"{Prefix}-{Index.ToString(CultureInfo.InvariantCulture)}";

    public string RootInterface => Interface('a');

    public string InstanceInterface => Interface('b');

    public string IngressInterface => Interface('i');

    public IPAddress HostAddress => new([10, 250, (byte)Index, 1]);

    public IPAddress InstanceAddress => new([10, 250, (byte)Index, 2]);

    /// <summary>The address prefix of every link made by this library (routes between instances go through the root).</summary>
    public const string AllLinksPrefix = "10.250.0.0/16";

    /// <summary>Checks <paramref name="prefix"/> and <paramref name="index"/> and returns the names, or throws naming the rule broken.</summary>
    public static NetworkNames Create(string prefix, int index)
    {
        ValidatePrefix(prefix);
        if (index is < 0 or > MaxIndex)
        {
            throw new ArgumentOutOfRangeException(nameof(index), index,
                $"index is {index}: allowed 0 to {MaxIndex} (it is the third octet of 10.250.<index>.1/.2).");
        }

        var names = new NetworkNames(prefix, index);
        var longest = names.RootInterface;
        if (longest.Length > MaxInterfaceNameLength)
        {
            var room = MaxInterfaceNameLength - (longest.Length - prefix.Length);
            throw new ArgumentException(
                $"prefix '{prefix}' with index {index} makes the interface name '{longest}' ({longest.Length} characters); Linux allows at most {MaxInterfaceNameLength}: use a prefix of at most {room} characters.",
                nameof(prefix));
        }

        return names;
    }

    /// <summary>Throws unless <paramref name="prefix"/> is a lowercase letter followed by lowercase letters, digits or '-'.</summary>
    public static void ValidatePrefix(string prefix)
    {
        ArgumentNullException.ThrowIfNull(prefix);
        if (!PrefixPattern().IsMatch(prefix))
        {
            throw new ArgumentException(
                $"prefix '{prefix}' is not allowed: use a lowercase letter followed by lowercase letters, digits or '-' (at most {MaxInterfaceNameLength - 3} characters), e.g. 'fc'.",
                nameof(prefix));
        }
    }

    /// <summary>Matches the namespaces made with <paramref name="prefix"/> and no other prefix.</summary>
    public static Regex NamespacePattern(string prefix) => new($"^{Regex.Escape(prefix)}-[0-9]+$", RegexOptions.CultureInvariant);

    /// <summary>Matches the interfaces (veth ends and ifb devices) made with <paramref name="prefix"/> and no other prefix.</summary>
    public static Regex InterfacePattern(string prefix) => new($"^{Regex.Escape(prefix)}v[0-9]+[abi]$", RegexOptions.CultureInvariant);

    private string Interface(char end) => $"{Prefix}v{Index.ToString(CultureInfo.InvariantCulture)}{end}";

    [GeneratedRegex("^[a-z][a-z0-9-]{0,11}$", RegexOptions.CultureInvariant)]
    private static partial Regex PrefixPattern();
}
