using System.Buffers.Binary;

namespace FaaSCache.WebJobs.Tests;

/// <summary>Writes and reads map files the way the Functions host and its workers do: byte 0 = 1, int64 LE length, content.</summary>
internal static class SharedMemoryFiles
{
    private const int HeaderSize = 9;

    /// <summary>Writes a new map in <paramref name="mapDirectory"/>, as a caller of TryPut does; returns its name.</summary>
    public static string Write(string mapDirectory, ReadOnlySpan<byte> content)
    {
        string name = Guid.NewGuid().ToString("N");
        using var file = new FileStream(Path.Combine(mapDirectory, name), FileMode.CreateNew, FileAccess.Write);
        Span<byte> header = stackalloc byte[HeaderSize];
        header[0] = 1;
        BinaryPrimitives.WriteInt64LittleEndian(header[1..], content.Length);
        file.Write(header);
        file.Write(content);
        return name;
    }

    /// <summary>Reads <paramref name="count"/> content bytes of a map, as a worker given (name, count) does.</summary>
    public static byte[] Read(string mapDirectory, string name, long count)
    {
        byte[] file = File.ReadAllBytes(Path.Combine(mapDirectory, name));
        Assert.Equal(1, file[0]);
        Assert.Equal(count, BinaryPrimitives.ReadInt64LittleEndian(file.AsSpan(1, 8)));
        return file.AsSpan(HeaderSize, checked((int)count)).ToArray();
    }

    public static bool Exists(string mapDirectory, string name) => File.Exists(Path.Combine(mapDirectory, name));
}
