using System.Text.Json;

namespace FaaSCache.Membership;

/// <summary>The membership blob's JSON form (camelCase, indented so people can read it).</summary>
internal static class MembershipJson
{
    public static byte[] Serialize(MembershipList list)
        => JsonSerializer.SerializeToUtf8Bytes(list, MembershipJsonContext.Default.MembershipList);

    /// <summary>Parses a membership blob; <paramref name="source"/> names it in errors.</summary>
    /// <exception cref="MembershipFormatException">The bytes are not a membership list this version understands.</exception>
    public static MembershipList Parse(ReadOnlySpan<byte> utf8, string source)
    {
        if (utf8.IsEmpty)
        {
            // A zero-length blob (someone created it by hand) holds nobody.
            return MembershipList.Empty;
        }

        MembershipList? list;
        try
        {
            list = JsonSerializer.Deserialize(utf8, MembershipJsonContext.Default.MembershipList);
        }
        catch (JsonException e)
        {
            throw new MembershipFormatException(source, e.Message, e);
        }
        catch (ArgumentException e)
        {
            throw new MembershipFormatException(source, e.Message, e);
        }

        if (list is null)
        {
            throw new MembershipFormatException(source, "it holds JSON null instead of an object with a \"members\" array.");
        }

        if (list.Schema > MembershipList.CurrentSchema)
        {
            throw new MembershipFormatException(
                source,
                $"it has schema {list.Schema}, newer than the {MembershipList.CurrentSchema} this version understands (was it written by a newer FaaSCache?).");
        }

        return list;
    }
}

[JsonSourceGenerationOptions(
    PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase,
    WriteIndented = true,
    RespectNullableAnnotations = true,
    RespectRequiredConstructorParameters = true,
    ReadCommentHandling = JsonCommentHandling.Skip,
    AllowTrailingCommas = true)]
[JsonSerializable(typeof(MembershipList))]
internal sealed partial class MembershipJsonContext : JsonSerializerContext;
