using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>Reading the section from a host.json file: the file's own errors (missing, unreadable, malformed, wrong version).</summary>
public static partial class FaaSCacheOptionsReader
{
    /// <summary>Loads a host.json file and reads its <c>extensions:faasCache</c> section (missing section = defaults).</summary>
    /// <param name="hostJsonPath">The path of host.json.</param>
    /// <returns>The options.</returns>
    /// <exception cref="FaaSCacheConfigurationException">
    /// The file is missing, unreadable or not valid JSON (the message names the file and the parser's reason),
    /// <c>version</c> is not "2.0", or the section is invalid (see <see cref="Read"/>).
    /// </exception>
    public static FaaSCacheOptions ReadHostJson(string hostJsonPath)
    {
        ArgumentException.ThrowIfNullOrEmpty(hostJsonPath);
        string fullPath = Path.GetFullPath(hostJsonPath);

        IConfigurationRoot root;
        try
        {
            using FileStream stream = File.OpenRead(fullPath);
            root = new ConfigurationBuilder().AddJsonStream(stream).Build();
        }
        catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, "the file does not exist.", ex);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, "the file cannot be read: " + ex.Message, ex);
        }
        catch (Exception ex) when (ex is JsonException or FormatException or InvalidDataException)
        {
            throw FaaSCacheConfigurationException.ForFile(fullPath, ParserReason(ex), ex);
        }

        try
        {
            IConfigurationSection version = root.GetSection("version");
            if (HasChildren(version) || (version.Value is { } v && v != HostJsonVersion))
            {
                throw new FaaSCacheConfigurationException(version.Path, Show(version), $"allowed value is {HostJsonVersion}");
            }

            IConfigurationSection extensions = root.GetSection("extensions");
            if (!string.IsNullOrEmpty(extensions.Value))
            {
                throw new FaaSCacheConfigurationException(extensions.Path, extensions.Value, "allowed values are objects");
            }

            return Read(root.GetSection(SectionPath));
        }
        catch (FaaSCacheConfigurationException ex) when (ex.FilePath is null)
        {
            throw ex.InFile(fullPath);
        }
    }
}
