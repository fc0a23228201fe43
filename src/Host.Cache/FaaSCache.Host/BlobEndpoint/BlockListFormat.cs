using System.Xml;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>What Put Block and Put Block List name blocks with: block ids, and the list's XML document.</summary>
internal static class BlockListFormat
{
    /// <summary>Block ids are canonical base64 of at most 64 bytes (the SDKs send 64 characters).</summary>
    public static bool IsValidBlockId(string id, out string why)
    {
        why = string.Empty;
        if (id.Length == 0)
        {
            why = "is empty";
            return false;
        }

        byte[] decoded = new byte[id.Length];
        if (!Convert.TryFromBase64String(id, decoded, out int length) || Convert.ToBase64String(decoded, 0, length) != id)
        {
            why = "is not canonical base64";
            return false;
        }

        if (length > 64)
        {
            why = $"decodes to {length} bytes, more than 64";
            return false;
        }

        return true;
    }

    /// <summary>The entries of a block list in document order (Latest, Uncommitted and Committed); <see cref="XmlException"/> when it is not one.</summary>
    public static List<BlockListEntry> Parse(byte[] xml)
    {
        var settings = new XmlReaderSettings { DtdProcessing = DtdProcessing.Prohibit, XmlResolver = null, IgnoreWhitespace = true };
        using var reader = XmlReader.Create(new MemoryStream(xml), settings);
        var entries = new List<BlockListEntry>();
        reader.MoveToContent();
        if (reader.LocalName != "BlockList")
        {
            throw new XmlException($"the root element is '{reader.LocalName}', not 'BlockList'");
        }

        reader.Read();
        while (!reader.EOF)
        {
            if (reader.NodeType == XmlNodeType.Element && reader.LocalName is "Latest" or "Uncommitted" or "Committed")
            {
                BlockListSection section = Enum.Parse<BlockListSection>(reader.LocalName);
                // Reading the content moves to the next node: no Read() after it.
                entries.Add(new BlockListEntry(section, reader.ReadElementContentAsString().Trim()));
            }
            else
            {
                reader.Read();
            }
        }

        return entries;
    }
}
